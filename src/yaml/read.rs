//! A small YAML reader with Go `yaml.v3` node semantics.
//!
//! lok8s reads its files with yaml.v3 and relies on details that a serde value model
//! loses: the raw text of a scalar (`1.10` stays `1.10`), its resolved tag (`name: 123`
//! is an `int`, `name: "123"` a `str`), and positions for error messages. This module
//! turns `saphyr-parser` events into an arena of nodes that keeps all three.
//!
//! Only the first document of a stream is read (as lok8s does). Hostile input is bounded:
//! nesting depth, alias expansion (billion-laughs) and recursive aliases are refused with
//! an error that names the line and column.

use saphyr_parser::{Event, Parser, ScalarStyle, Span};
use std::fmt::{self, Write as _};

/// Deepest nesting accepted (yaml.v3 allows 10,000; no lok8s file comes near 64).
const MAX_DEPTH: usize = 256;
/// Most nodes a document may hold, counting every use of an alias. No lok8s file comes
/// near 10,000; the bound keeps an 8 MiB input's node arena to tens of MiB (yaml.v3 has
/// none for alias-free documents: this is one of clinv's documented differences).
const MAX_NODES: u64 = 100_000;

/// A line/column position (both 1-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Pos {
    pub line: usize,
    pub col: usize,
}

impl std::fmt::Display for Pos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// Index of a node in its [`Doc`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeId(u32);

/// The resolved YAML tag of a scalar, as yaml.v3 resolves it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Tag {
    Null,
    Bool,
    Int,
    Float,
    Str,
    /// `<<`, the merge key.
    Merge,
    /// An explicit tag outside the core schema (`!foo`), kept by name.
    Custom(Box<str>),
}

/// One node of a parsed document.
#[derive(Debug)]
pub enum Node {
    /// `text` is boxed: a parser's string keeps its spare capacity (~100 bytes a scalar).
    Scalar {
        text: Box<str>,
        tag: Tag,
    },
    Seq(Vec<NodeId>),
    Map(Vec<(NodeId, NodeId)>),
}

/// Why a document could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YamlError {
    pub pos: Pos,
    pub message: String,
    /// Refused for its size alone (more than the node limit), not as invalid YAML.
    pub too_large: bool,
}

impl fmt::Display for YamlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.pos, self.message)
    }
}

impl std::error::Error for YamlError {}

/// The first document of a YAML stream.
#[derive(Debug, Default)]
pub struct Doc {
    nodes: Vec<Node>,
    pos: Vec<Pos>,
    /// Expanded size and depth of each finished node.
    sizes: Vec<Measure>,
    root: Option<NodeId>,
}

/// Size and depth of a node with its aliases expanded.
#[derive(Clone, Copy, Debug, Default)]
struct Measure {
    nodes: u64,
    depth: u32,
}

impl Measure {
    const LEAF: Measure = Measure { nodes: 1, depth: 1 };

    /// Folds a child into its parent's measure.
    fn add(self, child: Measure) -> Measure {
        Measure {
            nodes: self.nodes.saturating_add(child.nodes),
            depth: self.depth.max(child.depth.saturating_add(1)),
        }
    }
}

enum Open {
    Seq(NodeId, Vec<NodeId>),
    /// The pairs so far, a key waiting for its value, and the scalar keys seen (so a
    /// duplicate is found in constant time, not by scanning every earlier key). The set
    /// holds node ids; a key's identity is its text and tag, read from the document.
    Map(
        NodeId,
        Vec<(NodeId, NodeId)>,
        Option<NodeId>,
        hashbrown::HashTable<NodeId>,
    ),
}

impl Doc {
    /// Parses the first document of `text`. An empty stream is a document without a root.
    /// What follows the first document is not read (lok8s reads only the first).
    ///
    /// # Errors
    /// Syntax errors, duplicate mapping keys, excessive nesting or aliasing.
    pub fn parse(text: &str) -> Result<Doc, YamlError> {
        let mut events = Parser::new_from_str(text);
        Ok(read_document(&mut events)?.unwrap_or_default())
    }

    /// The documents of `text` (a `---`-separated stream, as `kubectl get -o yaml` of
    /// several objects or a manifest file holds), read one at a time so that a broken
    /// document does not hide the ones before it; empty and null documents are left out.
    /// After an error the iterator ends.
    pub fn documents(text: &str) -> Documents<'_> {
        Documents {
            events: Parser::new_from_str(text),
            done: false,
        }
    }

    fn measure(&self, id: NodeId) -> Measure {
        self.sizes[id.0 as usize]
    }

    /// Stores a finished container with its expanded size and depth (aliases counted at
    /// every use), refusing billion-laughs documents as soon as one node grows too large.
    /// The depth bound also bounds every recursive walk over the document.
    fn finish(&mut self, id: NodeId, node: Node, m: Measure) -> Result<NodeId, YamlError> {
        // Past `push`'s check, only aliases can make a node this large.
        let message = if m.nodes > MAX_NODES {
            "document contains excessive aliasing".to_string()
        } else if m.depth as usize > MAX_DEPTH {
            format!("nesting deeper than {MAX_DEPTH} levels (through aliases)")
        } else {
            self.nodes[id.0 as usize] = node;
            self.sizes[id.0 as usize] = m;
            return Ok(id);
        };
        Err(YamlError {
            too_large: false,
            pos: self.pos(id),
            message,
        })
    }

    /// Adds a node, refusing a document with too many before it is all in memory (the
    /// expanded size is only known when a container ends).
    fn push(&mut self, node: Node, pos: Pos) -> Result<NodeId, YamlError> {
        if self.nodes.len() as u64 >= MAX_NODES {
            return Err(YamlError {
                too_large: true,
                pos,
                message: format!("more than {MAX_NODES} YAML nodes"),
            });
        }
        self.nodes.push(node);
        self.pos.push(pos);
        self.sizes.push(Measure::LEAF);
        Ok(NodeId(
            u32::try_from(self.nodes.len() - 1).unwrap_or(u32::MAX),
        ))
    }

    /// The document's root node, `None` for an empty document.
    pub fn root(&self) -> Option<NodeId> {
        self.root
    }

    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.0 as usize]
    }

    pub fn pos(&self, id: NodeId) -> Pos {
        self.pos[id.0 as usize]
    }

    /// The raw text of a scalar node.
    pub fn text(&self, id: NodeId) -> Option<&str> {
        match self.node(id) {
            Node::Scalar { text, .. } => Some(text),
            _ => None,
        }
    }

    /// True for an absent-like node: a YAML null.
    pub fn is_null(&self, id: NodeId) -> bool {
        matches!(self.node(id), Node::Scalar { tag: Tag::Null, .. })
    }

    /// The short tag name yaml.v3 prints in messages (`str`, `int`, `map`, `seq`, …).
    pub fn tag_name(&self, id: NodeId) -> &str {
        match self.node(id) {
            Node::Seq(_) => "seq",
            Node::Map(_) => "map",
            Node::Scalar { tag, .. } => match tag {
                Tag::Null => "null",
                Tag::Bool => "bool",
                Tag::Int => "int",
                Tag::Float => "float",
                Tag::Str => "str",
                Tag::Merge => "merge",
                Tag::Custom(name) => name,
            },
        }
    }

    /// The identity of a scalar key (text and tag: two keys are the same when both
    /// match); `None` for a collection (never equal to another).
    fn key_ref(&self, id: NodeId) -> Option<(&str, &Tag)> {
        match self.node(id) {
            Node::Scalar { text, tag } => Some((text, tag)),
            _ => None,
        }
    }

    /// The entries of a mapping node with `<<` merge keys applied (explicit keys win),
    /// in document order; `None` when the node is not a mapping.
    pub fn entries(&self, id: NodeId) -> Option<Vec<(NodeId, NodeId)>> {
        let Node::Map(pairs) = self.node(id) else {
            return None;
        };
        if !pairs.iter().any(|(k, _)| self.is_merge(*k)) {
            return Some(pairs.clone());
        }
        // Explicit keys are unique (the parser refuses duplicates) and win over merged
        // ones; of merged keys the first wins. Sets keep this linear in the entries.
        let explicit: std::collections::HashSet<(&str, &Tag)> =
            pairs.iter().filter_map(|(k, _)| self.key_ref(*k)).collect();
        let mut merged: std::collections::HashSet<(&str, &Tag)> = Default::default();
        let mut out: Vec<(NodeId, NodeId)> = Vec::with_capacity(pairs.len());
        for &(k, v) in pairs {
            if !self.is_merge(k) {
                out.push((k, v));
                continue;
            }
            let sources: Vec<NodeId> = match self.node(v) {
                Node::Seq(items) => items.clone(),
                _ => vec![v],
            };
            for src in sources {
                for (mk, mv) in self.entries(src).unwrap_or_default() {
                    let fresh = self
                        .key_ref(mk)
                        .is_none_or(|key| !explicit.contains(&key) && merged.insert(key));
                    if fresh {
                        out.push((mk, mv));
                    }
                }
            }
        }
        Some(out)
    }

    fn is_merge(&self, id: NodeId) -> bool {
        matches!(
            self.node(id),
            Node::Scalar {
                tag: Tag::Merge,
                ..
            }
        )
    }

    /// Looks up `key` in a mapping node by the key's text.
    pub fn get(&self, map: NodeId, key: &str) -> Option<NodeId> {
        self.entries(map)?
            .into_iter()
            .find(|(k, _)| self.text(*k) == Some(key))
            .map(|(_, v)| v)
    }

    /// Follows a path of mapping keys from `from`.
    pub fn path(&self, from: NodeId, keys: &[&str]) -> Option<NodeId> {
        keys.iter().try_fold(from, |node, key| self.get(node, key))
    }

    /// Compact JSON in document order, as lok8s carries bootstrap entries: strings escaped
    /// without HTML escaping, control characters as `\u00XX`, numbers verbatim.
    pub fn to_json(&self, id: NodeId) -> String {
        let mut out = String::new();
        self.write_json(id, &mut out);
        out
    }

    fn write_json(&self, id: NodeId, out: &mut String) {
        match self.node(id) {
            Node::Scalar { text, tag } => match tag {
                Tag::Null => out.push_str("null"),
                Tag::Bool => out.push_str(if text.eq_ignore_ascii_case("true") {
                    "true"
                } else {
                    "false"
                }),
                Tag::Int | Tag::Float => out.push_str(text),
                _ => json_string(text, out),
            },
            Node::Seq(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    self.write_json(*item, out);
                }
                out.push(']');
            }
            Node::Map(_) => {
                out.push('{');
                for (i, (k, v)) in self.entries(id).unwrap_or_default().iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    json_string(&self.key_text(*k), out);
                    out.push(':');
                    self.write_json(*v, out);
                }
                out.push('}');
            }
        }
    }

    /// The node as a JSON value, as a Kubernetes client reads YAML: merge keys applied,
    /// keys as their text, integers and floats as numbers (a float JSON cannot hold, such
    /// as `.inf`, as null), custom tags dropped.
    pub fn to_value(&self, id: NodeId) -> serde_json::Value {
        use serde_json::Value;
        match self.node(id) {
            Node::Scalar { text, tag } => match tag {
                Tag::Null => Value::Null,
                Tag::Bool => Value::Bool(text.eq_ignore_ascii_case("true")),
                Tag::Int => go_int(&text.replace('_', ""))
                    .map_or_else(|| Value::String(text.to_string()), Value::Number),
                Tag::Float => text
                    .replace('_', "")
                    .parse::<f64>()
                    .ok()
                    .and_then(serde_json::Number::from_f64)
                    .map_or(Value::Null, Value::Number),
                _ => Value::String(text.to_string()),
            },
            Node::Seq(items) => Value::Array(items.iter().map(|i| self.to_value(*i)).collect()),
            Node::Map(_) => Value::Object(
                self.entries(id)
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(k, v)| (self.key_text(k), self.to_value(v)))
                    .collect(),
            ),
        }
    }

    /// The text a mapping key contributes to JSON (a null key is `null`).
    pub fn key_text(&self, id: NodeId) -> String {
        match self.node(id) {
            Node::Scalar { tag: Tag::Null, .. } => "null".into(),
            Node::Scalar { text, .. } => text.to_string(),
            _ => self.to_json(id),
        }
    }
}

/// The documents of a stream: see [`Doc::documents`].
pub struct Documents<'a> {
    events: Parser<'a, saphyr_parser::StrInput<'a>>,
    done: bool,
}

impl Iterator for Documents<'_> {
    type Item = Result<Doc, YamlError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            match read_document(&mut self.events) {
                Ok(Some(doc)) if doc.root.is_some_and(|r| !doc.is_null(r)) => return Some(Ok(doc)),
                Ok(Some(_)) => {}
                Ok(None) => self.done = true,
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
        None
    }
}

/// Reads events up to the end of the next document; `None` when the stream has ended.
fn read_document<'a>(
    events: &mut Parser<'a, saphyr_parser::StrInput<'a>>,
) -> Result<Option<Doc>, YamlError> {
    let mut b = Builder::default();
    let mut started = false;
    for item in events.by_ref() {
        let (event, span) = item.map_err(|e| YamlError {
            too_large: false,
            pos: Pos {
                line: e.marker().line(),
                col: e.marker().col() + 1,
            },
            message: e.info().to_string(),
        })?;
        match event {
            Event::DocumentStart(_) => started = true,
            Event::DocumentEnd => return Ok(Some(b.doc)),
            Event::StreamEnd => break,
            Event::StreamStart | Event::Nothing => {}
            event => {
                started = true;
                b.event(event, pos_of(&span))?;
            }
        }
    }
    Ok(started.then_some(b.doc))
}

/// A document under construction: the containers still open and the anchors seen.
#[derive(Default)]
struct Builder {
    doc: Doc,
    stack: Vec<Open>,
    anchors: std::collections::HashMap<usize, NodeId>,
    open_ids: Vec<NodeId>,
    hasher: std::hash::RandomState,
}

impl Builder {
    /// One node event: a finished node is attached to its parent.
    fn event(&mut self, event: Event<'_>, pos: Pos) -> Result<(), YamlError> {
        let id = match event {
            Event::Alias(anchor) => self.alias(anchor, pos)?,
            Event::Scalar(text, style, anchor, tag) => {
                let tag = match tag {
                    Some(t) => explicit_tag(&t.handle, &t.suffix, &text),
                    None if style == ScalarStyle::Plain => resolve_plain(&text),
                    None => Tag::Str,
                };
                let text = text.into();
                let id = self.doc.push(Node::Scalar { text, tag }, pos)?;
                self.anchor(anchor, id);
                id
            }
            Event::SequenceStart(anchor, _) => return self.open(anchor, true, pos),
            Event::MappingStart(anchor, _) => return self.open(anchor, false, pos),
            Event::SequenceEnd | Event::MappingEnd => match self.close()? {
                Some(id) => id,
                None => return Ok(()),
            },
            _ => return Ok(()),
        };
        self.attach(id)
    }

    fn anchor(&mut self, anchor: usize, id: NodeId) {
        if anchor != 0 {
            self.anchors.insert(anchor, id);
        }
    }

    fn alias(&self, anchor: usize, pos: Pos) -> Result<NodeId, YamlError> {
        let error = |message: &str| YamlError {
            too_large: false,
            pos,
            message: message.into(),
        };
        let Some(&target) = self.anchors.get(&anchor) else {
            return Err(error("unknown anchor"));
        };
        if self.open_ids.contains(&target) {
            return Err(error(
                "anchor is used inside its own value (recursive alias)",
            ));
        }
        Ok(target)
    }

    fn open(&mut self, anchor: usize, is_seq: bool, pos: Pos) -> Result<(), YamlError> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(YamlError {
                too_large: false,
                pos,
                message: format!("nesting deeper than {MAX_DEPTH} levels"),
            });
        }
        let id = self.doc.push(Node::Seq(Vec::new()), pos)?;
        self.anchor(anchor, id);
        self.open_ids.push(id);
        self.stack.push(if is_seq {
            Open::Seq(id, Vec::new())
        } else {
            Open::Map(id, Vec::new(), None, hashbrown::HashTable::new())
        });
        Ok(())
    }

    /// Ends the innermost container; its id, to attach to its parent.
    fn close(&mut self) -> Result<Option<NodeId>, YamlError> {
        self.open_ids.pop();
        let doc = &mut self.doc;
        match self.stack.pop() {
            Some(Open::Seq(id, items)) => {
                let m = items
                    .iter()
                    .fold(Measure::LEAF, |m, c| m.add(doc.measure(*c)));
                doc.finish(id, Node::Seq(items), m).map(Some)
            }
            Some(Open::Map(id, pairs, _, _)) => {
                let m = pairs.iter().fold(Measure::LEAF, |m, (k, v)| {
                    m.add(doc.measure(*k)).add(doc.measure(*v))
                });
                doc.finish(id, Node::Map(pairs), m).map(Some)
            }
            None => Ok(None),
        }
    }

    /// Attaches a finished node to the open container (or makes it the root); a mapping
    /// key waits for its value, and a key seen before is refused.
    fn attach(&mut self, id: NodeId) -> Result<(), YamlError> {
        let Some(open) = self.stack.last_mut() else {
            self.doc.root = Some(id);
            return Ok(());
        };
        let doc = &self.doc;
        match open {
            Open::Seq(_, items) => items.push(id),
            Open::Map(_, pairs, pending, keys) => match pending.take() {
                None => *pending = Some(id),
                Some(key) => {
                    check_unique(doc, &self.hasher, keys, key)?;
                    pairs.push((key, id));
                }
            },
        }
        Ok(())
    }
}

/// Records a scalar key in its mapping's key set, refusing one already there (collections
/// as keys are never equal to another key).
fn check_unique(
    doc: &Doc,
    hasher: &std::hash::RandomState,
    keys: &mut hashbrown::HashTable<NodeId>,
    key: NodeId,
) -> Result<(), YamlError> {
    use std::hash::BuildHasher as _;
    if doc.key_ref(key).is_none() {
        return Ok(());
    }
    let hash = |id: NodeId| hasher.hash_one(doc.key_ref(id));
    let same = |k: &NodeId| doc.key_ref(*k) == doc.key_ref(key);
    match keys.entry(hash(key), same, |k| hash(*k)) {
        hashbrown::hash_table::Entry::Vacant(v) => {
            v.insert(key);
            Ok(())
        }
        hashbrown::hash_table::Entry::Occupied(dup) => Err(YamlError {
            too_large: false,
            pos: doc.pos(key),
            message: format!(
                "mapping key {:?} already defined at line {}",
                doc.text(key).unwrap_or_default(),
                doc.pos(*dup.get()).line
            ),
        }),
    }
}

fn pos_of(span: &Span) -> Pos {
    Pos {
        line: span.start.line(),
        col: span.start.col() + 1,
    }
}

/// A JSON string literal: `"` and `\` escaped, control characters as `\u00XX`.
pub fn json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn explicit_tag(handle: &str, suffix: &str, text: &str) -> Tag {
    let core = handle == "tag:yaml.org,2002:" || handle == "!!";
    match (core, suffix) {
        (true, "str" | "binary" | "timestamp") => Tag::Str,
        (true, "null") => Tag::Null,
        (true, "bool") => Tag::Bool,
        (true, "int") => Tag::Int,
        (true, "float") => Tag::Float,
        (true, "merge") => Tag::Merge,
        (true, "map" | "seq") => resolve_plain(text),
        _ if handle == "!" && suffix.is_empty() => Tag::Str,
        _ => Tag::Custom(format!("{handle}{suffix}").into_boxed_str()),
    }
}

/// yaml.v3's implicit resolution of a plain scalar (timestamps stay strings, as they
/// become after lok8s's JSON round trip of a bootstrap entry).
pub fn resolve_plain(s: &str) -> Tag {
    match s {
        "" | "~" | "null" | "Null" | "NULL" => return Tag::Null,
        "true" | "True" | "TRUE" | "false" | "False" | "FALSE" => return Tag::Bool,
        ".nan" | ".NaN" | ".NAN" | ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF"
        | "-.inf" | "-.Inf" | "-.INF" => return Tag::Float,
        "<<" => return Tag::Merge,
        _ => {}
    }
    match s.as_bytes()[0] {
        b'.' => {
            if s.parse::<f64>().is_ok() {
                Tag::Float
            } else {
                Tag::Str
            }
        }
        b'+' | b'-' | b'0'..=b'9' => {
            let plain = s.replace('_', "");
            if go_parse_int(&plain) {
                Tag::Int
            } else if is_yaml_float(&plain) && plain.parse::<f64>().is_ok() {
                Tag::Float
            } else {
                Tag::Str
            }
        }
        _ => Tag::Str,
    }
}

/// Go's `strconv.ParseInt(s, 0, 64)` / `ParseUint` acceptance: sign, then `0x`, `0o`,
/// `0b`, a leading-`0` octal, or decimal digits, within 64 bits.
fn go_parse_int(s: &str) -> bool {
    go_int(s).is_some()
}

/// The value of an integer as yaml.v3 resolves it (`0x`, `0o`, `0b`, a leading-`0`
/// octal, decimal; a sign first), when it is one within 64 bits.
fn go_int(s: &str) -> Option<serde_json::Number> {
    let (neg, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let lower = body.to_ascii_lowercase();
    let (radix, digits) = int_radix(&lower);
    // from_str_radix would take a second sign.
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = u64::from_str_radix(digits, radix).ok()?;
    if !neg {
        return Some(magnitude.into());
    }
    let value = 0i64.checked_sub_unsigned(magnitude)?;
    Some(value.into())
}

/// The radix and digits of a lower-cased integer body.
fn int_radix(lower: &str) -> (u32, &str) {
    if let Some(d) = lower.strip_prefix("0x") {
        (16, d)
    } else if let Some(d) = lower.strip_prefix("0o") {
        (8, d)
    } else if let Some(d) = lower.strip_prefix("0b") {
        (2, d)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (8, &lower[1..])
    } else {
        (10, lower)
    }
}

/// `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`
fn is_yaml_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'-' | b'+')));
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            digits(&mut i);
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'-' | b'+')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(text: &str) -> (Doc, NodeId) {
        let doc = Doc::parse(text).unwrap();
        let root = doc.root().unwrap();
        (doc, root)
    }

    #[test]
    fn plain_scalars_resolve_like_yaml_v3() {
        for (text, tag) in [
            ("123", "int"),
            ("-0x1F", "int"),
            ("0o17", "int"),
            ("1_000", "int"),
            ("010", "int"),
            ("08", "float"),
            ("1.10", "float"),
            ("1e3", "float"),
            (".5", "float"),
            (".inf", "float"),
            ("true", "bool"),
            ("False", "bool"),
            ("yes", "str"),
            ("~", "null"),
            ("null", "null"),
            ("v1.2", "str"),
            ("2024-01-01", "str"),
            ("99999999999999999999", "float"),
            ("1.2.3", "str"),
        ] {
            let (doc, r) = root(text);
            assert_eq!(doc.tag_name(r), tag, "{text}");
            assert_eq!(doc.text(r), Some(text));
        }
        let (doc, r) = root("\"123\"");
        assert_eq!(doc.tag_name(r), "str");
        let (doc, r) = root("!!str 123");
        assert_eq!(doc.tag_name(r), "str");
    }

    #[test]
    fn keeps_raw_text_and_positions() {
        let (doc, r) = root("a:\n  version: 1.10\n");
        let v = doc.path(r, &["a", "version"]).unwrap();
        assert_eq!(doc.text(v), Some("1.10"));
        assert_eq!(doc.pos(v), Pos { line: 2, col: 12 });
    }

    #[test]
    fn compact_json_in_document_order() {
        let (doc, r) = root("z: 1\na: [x, ~, true, 'q\"<&>', {b: 1.10}]\n");
        assert_eq!(
            doc.to_json(r),
            r#"{"z":1,"a":["x",null,true,"q\"<&>",{"b":1.10}]}"#
        );
        let (doc, r) = root("\"tab\\there\"");
        assert_eq!(doc.to_json(r), r#""tab\u0009here""#);
    }

    #[test]
    fn only_the_first_document_is_read() {
        let (doc, r) = root("a: 1\n---\n: : [\n");
        assert!(doc.get(r, "a").is_some());
    }

    #[test]
    fn every_document_of_a_stream_is_read_with_empty_ones_left_out() {
        let all = |text| Doc::documents(text).collect::<Result<Vec<_>, _>>();
        let docs = all("a: 1\n---\n---\n# c\n---\n- b\n...\n").unwrap();
        let json: Vec<String> = docs.iter().map(|d| d.to_json(d.root().unwrap())).collect();
        assert_eq!(json, [r#"{"a":1}"#, r#"["b"]"#]);
        assert!(all("").unwrap().is_empty());
        let mut broken = Doc::documents("a: 1\n---\nb: [\n");
        assert!(
            broken.next().unwrap().is_ok(),
            "the document before the error"
        );
        assert_eq!(broken.next().unwrap().unwrap_err().pos.line, 4);
        assert!(broken.next().is_none());
    }

    #[test]
    fn values_are_read_as_a_kubernetes_client_reads_them() {
        let (doc, r) = root(
            "s: '1'\ni: 0x1F\nn: -12\nbig: 18446744073709551615\nf: 1.5\ninf: .inf\n\
             b: True\nz: ~\nl: [a, {<<: {m: 1}, k: v}]\n1: one\n",
        );
        assert_eq!(
            doc.to_value(r),
            serde_json::json!({
                "s": "1", "i": 31, "n": -12, "big": 18446744073709551615u64, "f": 1.5,
                "inf": null, "b": true, "z": null, "l": ["a", {"m": 1, "k": "v"}], "1": "one"
            })
        );
    }

    #[test]
    fn empty_stream_has_no_root() {
        assert!(Doc::parse("").unwrap().root().is_none());
        assert!(Doc::parse("# only a comment\n").unwrap().root().is_none());
    }

    #[test]
    fn syntax_errors_name_line_and_column() {
        let err = Doc::parse("a: 1\nb: [1, 2\n").unwrap_err();
        assert!(err.pos.line >= 2, "{err}");
        let err = Doc::parse("a:\n  b: 1\n c: 2\n").unwrap_err();
        assert_eq!(err.pos.line, 3, "{err}");
    }

    #[test]
    fn duplicate_keys_are_refused() {
        let err = Doc::parse("a: 1\nb: 2\na: 3\n").unwrap_err();
        assert_eq!(err.pos.line, 3);
        assert!(err.message.contains("already defined at line 1"), "{err}");
    }

    #[test]
    fn alias_bombs_are_refused() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let p = i - 1;
            text.push_str(&format!(
                "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
            ));
        }
        let err = Doc::parse(&text).unwrap_err();
        assert!(err.message.contains("excessive aliasing"), "{err}");
    }

    /// A document with more nodes than the limit is refused as it is read, at the node
    /// past the limit, and said to be too large; one that reaches it through aliases is
    /// said to alias too much.
    #[test]
    fn node_limit_counts_nodes_as_read_and_aliases_as_used() {
        let flat = |n: u64| format!("[{}]", "x,".repeat(n as usize - 2) + "x");
        assert!(Doc::parse(&flat(MAX_NODES)).is_ok());
        let err = Doc::parse(&flat(MAX_NODES + 1)).unwrap_err();
        assert_eq!(err.message, "more than 100000 YAML nodes");
        assert!(err.too_large);
        assert_eq!(err.pos.col as u64, 2 * MAX_NODES, "the last scalar");
        let half = MAX_NODES / 2;
        let aliased = format!("a: &a {}\nb: *a\n", flat(half));
        assert!(
            Doc::parse(&aliased)
                .unwrap_err()
                .message
                .contains("excessive aliasing")
        );
    }

    #[test]
    fn duplicates_compare_text_and_tag() {
        let (doc, r) = root("1: int\n\"1\": str\n[1]: seq\n[1]: seq again\n");
        assert_eq!(doc.entries(r).unwrap().len(), 4);
        let err = Doc::parse("&k a: x\n*k : y\n").unwrap_err();
        assert!(err.message.contains("already defined at line 1"), "{err}");
    }

    /// Found while fuzzing: duplicate keys and merge keys were found by scanning every
    /// earlier key, so an 8 MiB spec holding one flat map (~800,000 keys) took minutes, and
    /// 60,000 keys over four minutes in a debug build (now seconds, most of them the
    /// debug build of the YAML scanner). 24,000 keys, used twice, fit the node limit. What
    /// is read is held here; how fast, by `scripts/bench.py yaml-wide` (release, ≤ 1 s).
    #[test]
    fn wide_maps_and_merges_of_them_take_linear_time() {
        let mut text = String::from("wide: &w\n");
        for i in 0..24_000 {
            text.push_str(&format!("  k{i}: {i}\n"));
        }
        text.push_str("use:\n  <<: [*w, {extra: 1, k7: merged}]\n  k5: explicit\n");
        let (doc, r) = root(&text);
        let u = doc.get(r, "use").unwrap();
        let entries = doc.entries(u).unwrap();
        assert_eq!(entries.len(), 24_001);
        assert_eq!(doc.text(doc.get(u, "k5").unwrap()), Some("explicit"));
        assert_eq!(doc.text(doc.get(u, "k7").unwrap()), Some("7"));
        assert_eq!(doc.text(doc.get(u, "extra").unwrap()), Some("1"));
    }

    #[test]
    fn small_alias_use_is_fine_and_merge_keys_apply() {
        let (doc, r) = root("base: &b {wait: true, x: 1}\nuse: {<<: *b, x: 2}\n");
        let u = doc.get(r, "use").unwrap();
        assert_eq!(doc.to_json(u), r#"{"wait":true,"x":2}"#);
    }

    #[test]
    fn deep_nesting_is_refused() {
        let text = "[".repeat(10_000);
        let err = Doc::parse(&text).unwrap_err();
        assert!(
            err.message.contains("nesting") || err.message.contains("recursion limit"),
            "{err}"
        );
    }
}
