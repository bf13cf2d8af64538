//! kubectl's `-o jsonpath=TEMPLATE` for the tables.
//!
//! The template around the expressions (literal text, `{…}` actions, `{"\n"}` string
//! literals, `{range EXPR}…{end}`) is kubectl's (client-go `util/jsonpath`), written here;
//! each expression is evaluated by jsonpath-rust (RFC 9535) after kubectl's relative form
//! (`.items[*].name`, fields with `-`, `/` or `\.`) is turned into RFC syntax. The template
//! is applied to the command's `-o json` document, as kubectl applies it to the object.
//!
//! Output follows kubectl: the results of one expression are joined by a space, strings
//! print raw, objects and arrays as compact JSON, and a field that none of its inputs has
//! is an error naming the template and the field ("… is not found"; kubectl's
//! `--allow-missing-template-keys=false`).

use jsonpath_rust::parser::model::{JpQuery, Segment, Selector};
use jsonpath_rust::parser::parse_json_path;
use jsonpath_rust::query::js_path_process;
use serde_json::Value;

/// Ranges nested deeper than this are refused (rendering recurses once per level).
const MAX_RANGES: usize = 32;

/// A parsed `jsonpath=` template; [`Template::source`] is what the user wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct Template {
    source: String,
    nodes: Vec<Node>,
}

#[derive(Debug, Clone, PartialEq)]
enum Node {
    Text(String),
    Expr(Expr),
    Range(Expr, Vec<Node>),
}

/// One level of the template while it is parsed: the open range (its expression and
/// where its `{` is; none at the top) and the nodes collected so far.
type Level = (Option<(Expr, usize)>, Vec<Node>);

#[derive(Debug, Clone, PartialEq)]
struct Expr {
    query: JpQuery,
}

/// A template that does not parse: what is wrong and where (1-based character column
/// in the template).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} at column {column}")]
pub struct ParseError {
    pub column: usize,
    pub message: String,
}

impl Template {
    /// Parses kubectl's template dialect.
    ///
    /// # Errors
    /// [`ParseError`] with the column of the problem.
    pub fn parse(source: &str) -> Result<Template, ParseError> {
        // Character columns (1-based) of each byte offset, for messages.
        let column = |byte: usize| source[..byte].chars().count() + 1;
        let err = |byte: usize, message: String| ParseError {
            column: column(byte),
            message,
        };
        let mut stack: Vec<Level> = vec![(None, Vec::new())];
        let mut text = String::new();
        let mut at = 0;
        while at < source.len() {
            let rest = &source[at..];
            let Some(open) = rest.find('{') else {
                text.push_str(rest);
                break;
            };
            text.push_str(&rest[..open]);
            let start = at + open;
            let end = action_end(source, start + 1)
                .ok_or_else(|| err(start, "unclosed action".to_string()))?;
            let nodes = &mut stack.last_mut().expect("the template level").1;
            if !text.is_empty() {
                nodes.push(Node::Text(std::mem::take(&mut text)));
            }
            let inner = &source[start + 1..end];
            let lead = inner.len() - inner.trim_start().len();
            let action = inner.trim();
            let action_at = start + 1 + lead;
            if action == "end" {
                if stack.len() == 1 {
                    return Err(err(action_at, "not in range, nothing to end".to_string()));
                }
                let (range, body) = stack.pop().expect("an open range");
                let (expr, _) = range.expect("a range level has its expression");
                stack
                    .last_mut()
                    .expect("the template level")
                    .1
                    .push(Node::Range(expr, body));
            } else if let Some(expr) = action
                .strip_prefix("range")
                .filter(|e| e.starts_with(char::is_whitespace))
            {
                let expr_at = action_at + 5 + (expr.len() - expr.trim_start().len());
                let expr = parse_expr(expr.trim(), |byte, m| err(expr_at + byte, m))?;
                if stack.len() > MAX_RANGES {
                    return Err(err(start, format!("more than {MAX_RANGES} nested ranges")));
                }
                stack.push((Some((expr, start)), Vec::new()));
            } else if action.starts_with(['"', '\'']) {
                let literal =
                    parse_literal(action).map_err(|(byte, m)| err(action_at + byte, m))?;
                nodes.push(Node::Text(literal));
            } else if action.is_empty() {
                return Err(err(start, "empty action".to_string()));
            } else {
                let expr = parse_expr(action, |byte, m| err(action_at + byte, m))?;
                nodes.push(Node::Expr(expr));
            }
            at = end + 1;
        }
        if stack.len() > 1 {
            let (range, _) = stack.pop().expect("an open range");
            let (_, start) = range.expect("a range level has its expression");
            return Err(err(start, "range without {end}".to_string()));
        }
        let mut nodes = stack.pop().expect("the template level").1;
        if !text.is_empty() {
            nodes.push(Node::Text(text));
        }
        Ok(Template {
            source: source.to_string(),
            nodes,
        })
    }

    /// The template as written.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The template applied to `doc`.
    ///
    /// # Errors
    /// Kubectl's execution message (a field none of its inputs has, an index out of
    /// bounds); the caller names the template.
    /// With `allow_missing` (kubectl's default), a field or index the document lacks
    /// yields nothing; otherwise it is the error.
    pub fn render(&self, doc: &Value, allow_missing: bool) -> Result<String, Missing> {
        let mut out = String::new();
        render_nodes(&self.nodes, doc, allow_missing, &mut out)?;
        Ok(out)
    }
}

/// A top-level piece of a template applied to a list: literal text, or what one walk
/// over the list's elements prints (see [`Template::per_row`]).
#[derive(Debug)]
pub struct Part<'a>(PartKind<'a>);

#[derive(Debug)]
enum PartKind<'a> {
    Text(&'a str),
    /// An action whose first selector picks elements of the list: `query` (that selector
    /// as a wildcard or the filter it is, then the rest) is run on each picked element
    /// alone, in a list of one. A range renders its body on each result; an expression
    /// prints the results joined by a space.
    Walk {
        pick: Pick,
        query: JpQuery,
        body: Option<&'a [Node]>,
    },
}

/// Which elements the first selector of an action picks, by position in a list of `n`.
#[derive(Debug, Clone, Copy)]
enum Pick {
    /// `[*]` and filters (a filter is then judged on each element by the query).
    Every,
    Index(i64),
    /// A slice with a positive step (RFC 9535's bounds).
    Slice(Option<i64>, Option<i64>, i64),
}

impl Pick {
    fn picks(self, p: usize, n: usize) -> bool {
        let (p, n) = (p as i64, n as i64);
        let at = |i: i64| if i < 0 { n + i } else { i };
        match self {
            Pick::Every => true,
            Pick::Index(i) => at(i) == p,
            Pick::Slice(start, end, step) => {
                let lower = start.map_or(0, at).clamp(0, n);
                let upper = end.map_or(n, at).clamp(0, n);
                (lower..upper).contains(&p) && (p - lower) % step == 0
            }
        }
    }
}

/// One walk of a [`Part`] over the `n` elements of a list, in order.
pub struct Pass<'a> {
    part: &'a Part<'a>,
    n: usize,
    position: usize,
    first: bool,
}

impl<'a> Part<'a> {
    /// The literal text this part is, if it is one.
    pub fn text(&self) -> Option<&str> {
        match self.0 {
            PartKind::Text(text) => Some(text),
            PartKind::Walk { .. } => None,
        }
    }

    /// A walk over a list of `n` elements.
    pub fn start(&'a self, n: usize) -> Pass<'a> {
        Pass {
            part: self,
            n,
            position: 0,
            first: true,
        }
    }
}

impl Pass<'_> {
    /// What the part prints for the next element (nothing for [`Part::Text`]). With
    /// missing keys allowed, as [`Template::per_row`] requires, nothing here can fail.
    pub fn row(&mut self, element: Value) -> String {
        let mut out = String::new();
        let p = self.position;
        self.position += 1;
        let PartKind::Walk { pick, query, body } = &self.part.0 else {
            return out;
        };
        if !pick.picks(p, self.n) {
            return out;
        }
        let alone = Value::Array(vec![element]);
        for value in run(query, &alone) {
            match body {
                // Only a field that is missing could fail, and it is allowed.
                Some(body) => {
                    let _ = render_nodes(body, value, true, &mut out);
                }
                None => {
                    if !std::mem::take(&mut self.first) {
                        out.push(' ');
                    }
                    print_value(value, &mut out);
                }
            }
        }
        out
    }
}

impl Template {
    /// The template as parts that each walk a list once, element by element, printing
    /// what [`Template::render`] prints for the whole list with missing keys allowed.
    ///
    /// So a listing of any length needs one element in memory. Every action must start
    /// with a selector of the list's elements (`[*]`, a filter, an index, a slice with a
    /// positive step) and hold no union or `..` after it; `None` when one does not (a
    /// field of the list, a slice walked backwards).
    pub fn per_row(&self) -> Option<Vec<Part<'_>>> {
        self.nodes
            .iter()
            .map(|node| match node {
                Node::Text(text) => Some(Part(PartKind::Text(text))),
                Node::Range(expr, body) => walk(&expr.query, Some(body)),
                Node::Expr(expr) => walk(&expr.query, None),
            })
            .collect()
    }
}

/// [`PartKind::Walk`] of an action whose query is `query`, if its first selector picks
/// elements of the list.
fn walk<'a>(query: &JpQuery, body: Option<&'a [Node]>) -> Option<Part<'a>> {
    let (first, rest) = query.segments.split_first()?;
    let Segment::Selector(selector) = first else {
        return None;
    };
    // A union or `..` after it gathers across the picked elements (every name of
    // every element, then the next name): not one element at a time.
    if !rest.iter().all(|s| matches!(s, Segment::Selector(_))) {
        return None;
    }
    // A filter that looks at the root (`$`) would see one element, not the list.
    if query.to_string().matches('$').count() > 1 {
        return None;
    }
    let (pick, first) = match selector {
        Selector::Wildcard => (Pick::Every, Selector::Wildcard),
        Selector::Filter(_) => (Pick::Every, selector.clone()),
        Selector::Index(i) => (Pick::Index(*i), Selector::Wildcard),
        Selector::Slice(start, end, step) => match step.unwrap_or(1) {
            step if step > 0 => (Pick::Slice(*start, *end, step), Selector::Wildcard),
            _ => return None,
        },
        Selector::Name(_) => return None,
    };
    let mut segments = vec![Segment::Selector(first)];
    segments.extend_from_slice(rest);
    Some(Part(PartKind::Walk {
        pick,
        query: JpQuery::new(segments),
        body,
    }))
}

fn render_nodes(
    nodes: &[Node],
    current: &Value,
    allow_missing: bool,
    out: &mut String,
) -> Result<(), Missing> {
    for node in nodes {
        match node {
            Node::Text(text) => out.push_str(text),
            Node::Expr(expr) => {
                let values = expr.eval(current, allow_missing)?;
                for (i, value) in values.iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    print_value(value, out);
                }
            }
            Node::Range(expr, body) => {
                for value in expr.eval(current, allow_missing)? {
                    render_nodes(body, value, allow_missing, out)?;
                }
            }
        }
    }
    Ok(())
}

/// kubectl's printing of one result: strings raw, objects and arrays as compact JSON.
fn print_value(value: &Value, out: &mut String) {
    match value {
        Value::String(s) => out.push_str(s),
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::Array(_) | Value::Object(_) => out.push_str(&value.to_string()),
    }
}

/// Why a template found nothing where kubectl calls that an error (kubectl's words).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Missing {
    #[error("{0} is not found")]
    Field(String),
    #[error("array index out of bounds: index {index}, length {length}")]
    Index { index: i64, length: usize },
    #[error("[{0}]: not an array")]
    NotAnArray(i64),
}

impl Expr {
    fn eval<'a>(&self, current: &'a Value, allow_missing: bool) -> Result<Vec<&'a Value>, Missing> {
        let found = run(&self.query, current);
        if found.is_empty()
            && let Some(why) = self.why_empty(current)
        {
            // kubectl: a missing key or index is allowed; indexing what is not an array
            // is an error either way.
            if !allow_missing || matches!(why, Missing::NotAnArray(_)) {
                return Err(why);
            }
        }
        Ok(found)
    }

    /// Why the query found nothing, when kubectl calls it an error: the first segment
    /// that turned a non-empty input into nothing is a field (or an index).
    fn why_empty(&self, current: &Value) -> Option<Missing> {
        let segments = &self.query.segments;
        let mut input = vec![current];
        for n in 1..=segments.len() {
            let output = run(&JpQuery::new(segments[..n].to_vec()), current);
            if output.is_empty() {
                return match &segments[n - 1] {
                    Segment::Selector(Selector::Name(name)) => {
                        Some(Missing::Field(name.to_string()))
                    }
                    Segment::Descendant(inner) => match inner.as_ref() {
                        Segment::Selector(Selector::Name(name)) => {
                            Some(Missing::Field(name.to_string()))
                        }
                        _ => None,
                    },
                    Segment::Selector(Selector::Index(index)) => {
                        match input.iter().find_map(|v| v.as_array()) {
                            Some(array) => Some(Missing::Index {
                                index: *index,
                                length: array.len(),
                            }),
                            None => Some(Missing::NotAnArray(*index)),
                        }
                    }
                    _ => None,
                };
            }
            input = output;
        }
        None
    }
}

fn run<'a>(query: &JpQuery, value: &'a Value) -> Vec<&'a Value> {
    js_path_process(query, value)
        .map(|refs| refs.into_iter().map(|r| r.val()).collect())
        .unwrap_or_default()
}

/// The characters of `text` from `from` on that are outside quotes (`"…"`, `'…'`, with
/// `\` escapes), with their byte offsets in `text`.
fn unquoted(text: &str, from: usize) -> impl Iterator<Item = (usize, char)> + '_ {
    let (mut quote, mut escaped) = (None::<char>, false);
    text[from..].char_indices().filter_map(move |(i, c)| {
        match quote {
            Some(_) if escaped => escaped = false,
            Some(_) if c == '\\' => escaped = true,
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => quote = Some(c),
            None => return Some((from + i, c)),
        }
        None
    })
}

/// The byte offset of the `}` that closes the action opened before `from`: quotes and
/// brackets may hold braces; a line break or the end of the template leaves it unclosed.
fn action_end(source: &str, from: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in unquoted(source, from) {
        match c {
            '\n' | '\r' => return None,
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            '}' if depth == 0 => return Some(i),
            _ => {}
        }
    }
    None
}

/// A `{"…"}` string literal with Go's escapes (`\n`, `\t`, `\r`, `\\`, `\"`, `\'`).
fn parse_literal(action: &str) -> Result<String, (usize, String)> {
    let quote = action.chars().next().expect("a quoted action");
    let mut out = String::new();
    let mut chars = action.char_indices().skip(1);
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some((_, 'n')) => out.push('\n'),
                Some((_, 't')) => out.push('\t'),
                Some((_, 'r')) => out.push('\r'),
                Some((_, e @ ('\\' | '"' | '\''))) => out.push(e),
                Some((j, e)) => return Err((j - 1, format!("unknown escape \\{e} in string"))),
                None => return Err((i, "unterminated string".to_string())),
            },
            c if c == quote => {
                let rest = &action[i + 1..];
                return match rest.trim() {
                    "" => Ok(out),
                    _ => Err((
                        i + 1,
                        format!("unexpected '{}' after the string", rest.trim()),
                    )),
                };
            }
            c => out.push(c),
        }
    }
    Err((0, "unterminated string".to_string()))
}

/// A kubectl expression (`.items[*].name`, `$.a`, `..name`, `[0]`), as a jsonpath-rust
/// query. `err` turns a byte offset in `written` and a message into the caller's error.
fn parse_expr(
    written: &str,
    err: impl Fn(usize, String) -> ParseError,
) -> Result<Expr, ParseError> {
    let (rfc, origin) = to_rfc(written).map_err(|(byte, m)| err(byte, m))?;
    let query = parse_json_path(&rfc).map_err(|e| {
        // pest says where ("--> 1:COL") in the RFC text; map it back.
        let text = e.to_string();
        let col = text
            .split_once("--> 1:")
            .and_then(|(_, r)| r.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|c| c.parse::<usize>().ok())
            .unwrap_or(1);
        let byte = rfc
            .char_indices()
            .nth(col - 1)
            .map_or(rfc.len(), |(b, _)| b);
        let at = origin.get(byte).copied().unwrap_or(written.len());
        err(at, format!("invalid expression '{written}'"))
    })?;
    Ok(Expr { query })
}

/// kubectl's expression syntax in RFC 9535 form, with the offset in `written` of each
/// byte of the result. kubectl's fields (after `.`) end at `.`, `[`, `]`, `,`, `$`, `@`,
/// `{`, `}` or a space, and `\` escapes the next character; brackets are RFC's already.
fn to_rfc(written: &str) -> Result<(String, Vec<usize>), (usize, String)> {
    let mut rfc = String::from("$");
    let mut origin = vec![0];
    let push = |rfc: &mut String, origin: &mut Vec<usize>, s: &str, at: usize| {
        rfc.push_str(s);
        origin.extend(std::iter::repeat_n(at, s.len()));
    };
    let bytes = written.as_bytes();
    let mut i = 0;
    if matches!(bytes.first(), Some(b'$' | b'@')) {
        i = 1;
    }
    while i < bytes.len() {
        match bytes[i] {
            b' ' | b'\t' => i += 1,
            b'.' => {
                let descendant = bytes.get(i + 1) == Some(&b'.');
                let start = i;
                i += if descendant { 2 } else { 1 };
                if descendant {
                    push(&mut rfc, &mut origin, "..", start);
                    if matches!(bytes.get(i), Some(b'[') | None) {
                        continue;
                    }
                }
                let (name, next) = field(written, i);
                if name.is_empty() {
                    return Err((i, "expected a field name".to_string()));
                }
                if name == "*" {
                    push(
                        &mut rfc,
                        &mut origin,
                        if descendant { "*" } else { "[*]" },
                        i,
                    );
                } else {
                    let quoted = name.replace('\\', "\\\\").replace('\'', "\\'");
                    push(&mut rfc, &mut origin, &format!("['{quoted}']"), i);
                }
                i = next;
            }
            b'[' => {
                let end = bracket_end(written, i).ok_or((i, "unclosed '['".to_string()))?;
                rfc.push_str(&written[i..=end]);
                origin.extend(i..=end);
                i = end + 1;
            }
            _ => {
                let c = written[i..].chars().next().expect("a character");
                return Err((i, format!("unrecognized character in action: '{c}'")));
            }
        }
    }
    Ok((rfc, origin))
}

/// A kubectl field name from byte `from`, unescaped, and the offset after it.
fn field(written: &str, from: usize) -> (String, usize) {
    let mut name = String::new();
    let mut chars = written[from..].char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some((_, e)) => name.push(e),
                None => return (name, written.len()),
            },
            '.' | ',' | '[' | ']' | '$' | '@' | '{' | '}' | ' ' | '\t' => {
                return (name, from + i);
            }
            c => name.push(c),
        }
    }
    (name, written.len())
}

/// The `]` that closes the `[` at `from` (quotes and nested brackets skipped).
fn bracket_end(written: &str, from: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in unquoted(written, from) {
        match c {
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc() -> Value {
        json!({
            "domain": "lab.example",
            "items": [
                {"name": "cilium", "state": "pending", "version": "1.19.2", "labels": {"app.kubernetes.io/name": "c"}},
                {"name": "metrics-server", "state": "applied", "n": 3},
                {"name": "cert-manager", "state": "pending", "ok": true, "gone": null}
            ]
        })
    }

    /// A template applied row by row prints what it prints for the whole list; one
    /// that needs the list at once is not taken row by row.
    #[test]
    fn templates_walked_row_by_row_print_what_the_whole_list_prints() {
        let list = doc()["items"].clone();
        let rows = list.as_array().unwrap();
        for template in [
            "{range [*]}{.name}{\"\\t\"}{.state}{\"\\n\"}{end}",
            "{range $[*]}{.version}{.missing}{\"\\n\"}{end}",
            "{[*].name}",
            "head {$[*].state} mid {[*].n}{[*].labels} tail",
            "{[*].missing}{[*].labels.app\\.kubernetes\\.io/name}",
            "{range [*]}{range .labels}{@}{end};{end}",
            "{[0].name} {[-1].name} {[7].name} {[-9].name}",
            "{[1:].name}|{[:2].name}|{[-2:].state}|{[::2].name}|{[5:9].name}|{[0:3:2].name}",
            "{range [?(@.state==\"pending\")]}{.name}{\"\\n\"}{end}",
            "{[?(@.n)].name} {[?(@.ok==true)].name} {[*].labels.*}",
            "{range [1:]}{.name},{end}",
            "",
        ] {
            let t = Template::parse(template).unwrap();
            let parts = t.per_row().unwrap_or_else(|| panic!("{template}"));
            let mut out = String::new();
            for part in &parts {
                match part.text() {
                    Some(text) => out.push_str(text),
                    None => {
                        let mut pass = part.start(rows.len());
                        rows.iter().for_each(|r| out.push_str(&pass.row(r.clone())));
                    }
                }
            }
            assert_eq!(out, t.render(&list, true).unwrap(), "{template}");
        }
        for whole in [
            "{..name}",
            "{[::-1].name}",
            "{.items}",
            "{range ..name}{end}",
        ] {
            assert!(
                Template::parse(whole).unwrap().per_row().is_none(),
                "{whole}"
            );
        }
    }

    fn render(template: &str) -> Result<String, String> {
        Template::parse(template)
            .map_err(|e| e.to_string())?
            .render(&doc(), false)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn expressions_join_their_results_with_a_space() {
        for (template, want) in [
            ("{.items[*].name}", "cilium metrics-server cert-manager"),
            ("{.domain}", "lab.example"),
            ("{$.domain}", "lab.example"),
            ("{.items[0].name}", "cilium"),
            ("{.items[-1:].name}", "cert-manager"),
            (
                "{.items[1].n} {.items[2].ok} {.items[2].gone}",
                "3 true null",
            ),
            // Objects and arrays as compact JSON, in the document's order.
            (
                "{.items[1]}",
                r#"{"name":"metrics-server","state":"applied","n":3}"#,
            ),
            ("{.items[*].labels}", r#"{"app.kubernetes.io/name":"c"}"#),
        ] {
            assert_eq!(render(template).unwrap(), want, "{template}");
        }
    }

    #[test]
    fn literals_text_and_ranges() {
        assert_eq!(
            render("domain={.domain}{\"\\n\"}").unwrap(),
            "domain=lab.example\n"
        );
        assert_eq!(
            render(r#"{range .items[*]}{.name}{"\t"}{.state}{"\n"}{end}"#).unwrap(),
            "cilium\tpending\nmetrics-server\tapplied\ncert-manager\tpending\n"
        );
        // A range over the array itself runs once, as in kubectl.
        assert_eq!(
            render("{range .items}[{$[0].name}]{end}").unwrap(),
            "[cilium]"
        );
        assert_eq!(render("{'x'}").unwrap(), "x");
        assert_eq!(render("plain").unwrap(), "plain");
        assert_eq!(render("{$[0]}").unwrap_err(), "[0]: not an array");
        assert_eq!(render("{@.domain}").unwrap(), "lab.example");
    }

    #[test]
    fn filters_recursive_descent_and_escaped_fields() {
        for (template, want) in [
            (
                r#"{.items[?(@.state=="pending")].name}"#,
                "cilium cert-manager",
            ),
            ("{.items[?(@.n > 2)].name}", "metrics-server"),
            // A filter that selects nothing is no error.
            (r#"{.items[?(@.state=="x")].name}"#, ""),
            ("{..version}", "1.19.2"),
            (r"{.items[0].labels.app\.kubernetes\.io/name}", "c"),
            ("{.items[0]['name','state']}", "cilium pending"),
        ] {
            assert_eq!(render(template).unwrap(), want, "{template}");
        }
    }

    #[test]
    fn a_missing_field_names_the_field() {
        for (template, error) in [
            ("{.nme}", "nme is not found"),
            ("{.items[*].nme}", "nme is not found"),
            ("{..nme}", "nme is not found"),
            ("{range .items[*]}{.version}{end}", "version is not found"),
            (
                "{.items[5]}",
                "array index out of bounds: index 5, length 3",
            ),
        ] {
            assert_eq!(render(template).unwrap_err(), error, "{template}");
        }
        // A field some inputs have prints those.
        assert_eq!(render("{.items[*].version}").unwrap(), "1.19.2");
    }

    proptest::proptest! {
        /// Whatever the template, parsing and rendering return, never panic.
        #[test]
        fn any_template_parses_or_says_why(t in "[{}\\[\\]().@$?*\"'\\\\=<a-z0-9 é,:!&|-]{0,40}") {
            if let Ok(template) = Template::parse(&t) {
                let _ = template.render(&doc(), true);
                let _ = template.render(&doc(), false);
            }
        }

        /// The same for templates built from the dialect's pieces, which mostly parse.
        #[test]
        fn any_template_of_pieces_parses_or_says_why(t in "(\\{(\\.[a-zé]{1,3}|\\[[0-9*:-]{1,3}\\]|\\.\\.|\\[\\?\\(@\\.[a-z]{1,2}==\"[a-z]\"\\)\\]|range |end|\\$|\"é\\\\n\"| ){1,4}\\}|[a-zé ]{0,3}){1,6}") {
            if let Ok(template) = Template::parse(&t) {
                let _ = template.render(&doc(), true);
                let _ = template.render(&doc(), false);
            }
        }
    }

    #[test]
    fn deeply_nested_ranges_are_refused() {
        let deep = format!("{}{}", "{range $}".repeat(33), "{end}".repeat(33));
        assert_eq!(
            Template::parse(&deep).unwrap_err().to_string(),
            "more than 32 nested ranges at column 289"
        );
        let ok = format!("{}x{}", "{range $}".repeat(32), "{end}".repeat(32));
        assert_eq!(
            Template::parse(&ok).unwrap().render(&doc(), false).unwrap(),
            "x"
        );
    }

    #[test]
    fn bad_templates_say_where() {
        let err = |t: &str| Template::parse(t).unwrap_err().to_string();
        assert_eq!(err("{.items"), "unclosed action at column 1");
        assert_eq!(
            err("ab{.a}{end}"),
            "not in range, nothing to end at column 8"
        );
        assert_eq!(
            err("{range .items[*]}{.a}"),
            "range without {end} at column 1"
        );
        assert_eq!(
            err("{.a}{items}"),
            "unrecognized character in action: 'i' at column 6"
        );
        assert_eq!(err("{}"), "empty action at column 1");
        assert_eq!(
            err(r#"{"a\q"}"#),
            r"unknown escape \q in string at column 4"
        );
        assert_eq!(err("{.a.,}"), "expected a field name at column 5");
        // kubectl has no `{.}`: the whole object is `{$}` or `{@}`.
        assert_eq!(err("{.}"), "expected a field name at column 3");
        assert!(
            err("{.items[?(@.x==]}").starts_with("invalid expression '.items[?(@.x==]' at column "),
            "{}",
            err("{.items[?(@.x==]}")
        );
        assert_eq!(err("{.items[0}"), "unclosed action at column 1");
    }
}
