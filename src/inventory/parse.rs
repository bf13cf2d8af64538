//! Reading a `ClusterInventory` back from text: a rendered CR (YAML or JSON, as `clinv
//! render` writes it) or a live-object dump (`kubectl get clinv cluster -o yaml|json`).
//!
//! Pure: the caller reads the bytes. Live dumps carry server-owned metadata (`uid`,
//! `resourceVersion`, `managedFields`, …), `status`, annotations and possibly a `List`
//! wrapper; all of that is tolerated and dropped, because the diff compares only what lok8s
//! writes. Types are checked by hand so an error names the field (`spec.addons[2].chartVersion:
//! expected a string`) instead of serde's position-less message.
//!
//! The one reader of the inventory: files, live objects, Git commits, pulled OCI
//! artifacts and the store's objects ([`inventory_from_stored`]) all go through
//! [`inventory_from_value`], so an object one source accepts no other refuses. JSON is
//! read as YAML is: a key written twice is refused, not decided by its last value.

use crate::error::InventoryError;
use crate::inventory::{Addon, ClusterInventory, InventorySpec, KIND, Metadata};
use crate::project::bootstrap::Source;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The API group every inventory version belongs to.
const GROUP: &str = "lok8s.dev";

type Result<T> = std::result::Result<T, InventoryError>;

/// Parses `text` (JSON when it starts with `{`, else YAML, possibly several documents)
/// and returns the one `ClusterInventory` in it.
///
/// # Errors
/// Without the file name (the caller names it): not JSON/YAML, no or several
/// inventories, a field of the wrong type, a missing required field.
pub fn inventory_from_text(text: &str) -> Result<ClusterInventory> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() {
        return Err(InventoryError::Empty);
    }
    let docs: Vec<Value> = if text.trim_start().starts_with('{') {
        vec![json(text)?]
    } else {
        crate::yaml::Doc::documents(text)
            .map(|doc| {
                let doc = doc.map_err(InventoryError::Yaml)?;
                Ok(doc.root().map_or(Value::Null, |r| doc.to_value(r)))
            })
            .collect::<Result<_>>()?
    };
    let mut found = Vec::new();
    let mut kinds = Vec::new();
    for doc in docs {
        collect(doc, &mut found, &mut kinds);
    }
    match found.len() {
        1 => inventory_from_value(found.remove(0)),
        0 if kinds.is_empty() => Err(InventoryError::NoObject),
        0 => Err(InventoryError::OtherKinds(kinds)),
        n => Err(InventoryError::Several(n)),
    }
}

/// A stored CR object (the CR without `renderedAt`, as the store keeps it) with
/// `rendered_at` put back, read by the same rules as every other source.
///
/// # Errors
/// As [`inventory_from_value`]; text that is not one JSON object without duplicate keys.
pub fn inventory_from_stored(text: &str, rendered_at: &str) -> Result<ClusterInventory> {
    let mut value = json(text)?;
    if let Some(spec) = value.get_mut("spec").and_then(Value::as_object_mut) {
        spec.insert("renderedAt".into(), rendered_at.into());
    }
    inventory_from_value(value)
}

/// One JSON value; a key that appears twice in an object is an error naming the key and
/// its line (serde_json alone keeps the last one, and YAML refuses it: one rule for both).
fn json(text: &str) -> Result<Value> {
    use serde::de::DeserializeSeed;
    let mut de = serde_json::Deserializer::from_str(text);
    let value = Unique.deserialize(&mut de).map_err(InventoryError::Json)?;
    de.end().map_err(InventoryError::Json)?;
    Ok(value)
}

/// Builds a [`Value`] as serde_json does, refusing duplicate keys. Nesting is bounded by
/// serde_json's own recursion limit, which counts the depth whatever the visitor.
struct Unique;

impl<'de> serde::de::DeserializeSeed<'de> for Unique {
    type Value = Value;
    fn deserialize<D: serde::Deserializer<'de>>(
        self,
        d: D,
    ) -> std::result::Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Unique {
    type Value = Value;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> std::result::Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> std::result::Result<Value, E> {
        Ok(v.into())
    }
    fn visit_u64<E>(self, v: u64) -> std::result::Result<Value, E> {
        Ok(v.into())
    }
    fn visit_f64<E>(self, v: f64) -> std::result::Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> std::result::Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> std::result::Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> std::result::Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> std::result::Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(Unique)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if out.contains_key(&key) {
                return Err(serde::de::Error::custom(format_args!(
                    "duplicate key `{key}`"
                )));
            }
            let value = map.next_value_seed(Unique)?;
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

/// Gathers inventories, unwrapping `kind: List` (what `kubectl get clinv -o yaml` prints
/// without a name); remembers the other kinds for the error message.
fn collect(doc: Value, found: &mut Vec<Value>, kinds: &mut Vec<String>) {
    let kind = doc
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if kind == KIND {
        found.push(doc);
    } else if kind == "List" || (kind.ends_with("List") && doc.get("items").is_some()) {
        if let Some(Value::Array(items)) = doc.get("items") {
            for item in items.clone() {
                collect(item, found, kinds);
            }
        }
    } else if !kind.is_empty() && !kinds.contains(&kind) {
        kinds.push(kind);
    }
}

/// Converts one object (already known or expected to be a `ClusterInventory`).
///
/// # Errors
/// As [`inventory_from_text`].
pub fn inventory_from_value(value: Value) -> Result<ClusterInventory> {
    let Value::Object(obj) = value else {
        return Err(InventoryError::Field {
            field: "object".into(),
            problem: format!("expected an object, found {}", type_name(&value)),
        });
    };
    let kind = string(&obj, "", "kind")?.unwrap_or_default();
    if kind != KIND {
        return Err(field(
            "",
            "kind",
            format!("expected {KIND}, found '{kind}'"),
        ));
    }
    let api_version = required(&obj, "", "apiVersion")?;
    if api_version.split('/').next() != Some(GROUP) {
        return Err(field(
            "",
            "apiVersion",
            format!("expected {GROUP}/<version>, found '{api_version}'"),
        ));
    }
    // Every Kubernetes object has a name, and the store's objects always had one: an
    // object without it is not an inventory from any source.
    let metadata = object(&obj, "", "metadata")?;
    let name = match metadata {
        Some(m) => required(m, "metadata.", "name")?,
        None => return Err(missing("metadata.", "name")),
    };
    let labels = labels(metadata)?;
    let spec = object(&obj, "", "spec")?.ok_or_else(|| missing("", "spec"))?;
    let p = "spec.";
    let addons = match spec.get("addons") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, item)| addon(item, i))
            .collect::<Result<_>>()?,
        Some(other) => {
            return Err(field(
                "spec.",
                "addons",
                format!("expected a list, found {}", type_name(other)),
            ));
        }
    };
    Ok(ClusterInventory {
        api_version,
        kind,
        metadata: Metadata { name, labels },
        spec: InventorySpec {
            lok8s_version: required(spec, p, "lok8sVersion")?,
            kind: required(spec, p, "kind")?,
            spec_hash: required(spec, p, "specHash")?,
            rendered_at: required(spec, p, "renderedAt")?,
            addons,
            provider: string(spec, p, "provider")?,
            kubernetes_version: string(spec, p, "kubernetesVersion")?,
        },
    })
}

/// `metadata.labels`: strings, a null value left out.
fn labels(metadata: Option<&Map<String, Value>>) -> Result<BTreeMap<String, String>> {
    let mut labels = BTreeMap::new();
    let Some(l) = metadata
        .map(|m| object(m, "metadata.", "labels"))
        .transpose()?
    else {
        return Ok(labels);
    };
    for (key, v) in l.into_iter().flatten() {
        match v {
            Value::String(s) => {
                labels.insert(key.clone(), s.clone());
            }
            Value::Null => {}
            other => {
                return Err(InventoryError::Field {
                    field: format!("metadata.labels[{key}]"),
                    problem: format!("expected a string, found {}", type_name(other)),
                });
            }
        }
    }
    Ok(labels)
}

fn addon(item: &Value, index: usize) -> Result<Addon> {
    let prefix = format!("spec.addons[{index}].");
    let Value::Object(a) = item else {
        return Err(InventoryError::Field {
            field: format!("spec.addons[{index}]"),
            problem: format!("expected an object, found {}", type_name(item)),
        });
    };
    let source = match string(a, &prefix, "source")?.as_deref() {
        None => None,
        Some("addon") => Some(Source::Addon),
        Some("target") => Some(Source::Target),
        Some(other) => {
            return Err(field(
                &prefix,
                "source",
                format!("expected addon or target, found '{other}'"),
            ));
        }
    };
    Ok(Addon {
        name: required(a, &prefix, "name")?,
        source,
        chart_version: string(a, &prefix, "chartVersion")?,
        category: string(a, &prefix, "category")?,
        app_version: string(a, &prefix, "appVersion")?,
    })
}

/// An optional string field; `null` counts as absent.
fn string(obj: &Map<String, Value>, prefix: &str, key: &str) -> Result<Option<String>> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(field(
            prefix,
            key,
            format!(
                "expected a string, found {}{}",
                type_name(other),
                if other.is_number() {
                    " (quote versions in YAML: '1.20' is not 1.2)"
                } else {
                    ""
                }
            ),
        )),
    }
}

fn required(obj: &Map<String, Value>, prefix: &str, key: &str) -> Result<String> {
    string(obj, prefix, key)?.ok_or_else(|| missing(prefix, key))
}

fn field(prefix: &str, key: &str, problem: String) -> InventoryError {
    InventoryError::Field {
        field: format!("{prefix}{key}"),
        problem,
    }
}

fn missing(prefix: &str, key: &str) -> InventoryError {
    field(prefix, key, "required field is missing".into())
}

fn object<'a>(
    obj: &'a Map<String, Value>,
    prefix: &str,
    key: &str,
) -> Result<Option<&'a Map<String, Value>>> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(m)) => Ok(Some(m)),
        Some(other) => Err(field(
            prefix,
            key,
            format!("expected an object, found {}", type_name(other)),
        )),
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RENDERED: &str = "apiVersion: lok8s.dev/v1alpha1
kind: ClusterInventory
metadata:
  name: cluster
  labels:
    lok8s.dev/domain: prod.acme.example
spec:
  lok8sVersion: 0.7.9
  kind: kubeone
  specHash: abc
  renderedAt: 2023-11-14T22:13:20Z
  addons:
  - name: cilium
    source: addon
    chartVersion: 1.19.2
    category: networking
  - name: site-glue
    source: target
  provider: hetzner
  kubernetesVersion: v1.31.10
";

    #[test]
    fn rendered_yaml_round_trips_through_the_model() {
        let inv = inventory_from_text(RENDERED).unwrap();
        assert_eq!(crate::inventory::render::to_yaml(&inv).unwrap(), RENDERED);
        let json = crate::inventory::render::to_json(&inv).unwrap();
        assert_eq!(inventory_from_text(&json).unwrap(), inv);
    }

    #[test]
    fn live_dumps_with_server_metadata_and_status_are_tolerated() {
        let live = format!(
            "{}status:\n  lastReported: 2026-01-01T00:00:00Z\n  observedAddons: [{{name: cilium, version: 1.19.2, healthy: true}}]\n",
            RENDERED.replace(
                "  name: cluster\n",
                "  name: cluster\n  uid: 0b7c\n  resourceVersion: \"812\"\n  generation: 3\n  creationTimestamp: \"2026-01-01T00:00:00Z\"\n  managedFields:\n  - manager: lok8s\n    operation: Apply\n  annotations:\n    a: b\n"
            )
        );
        assert_eq!(
            inventory_from_text(&live).unwrap(),
            inventory_from_text(RENDERED).unwrap()
        );
        let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": [
            serde_json::to_value(inventory_from_text(RENDERED).unwrap()).unwrap()
        ]});
        assert!(inventory_from_text(&list.to_string()).is_ok());
    }

    #[test]
    fn the_inventory_is_found_among_other_documents() {
        let text = format!("kind: CustomResourceDefinition\napiVersion: x\n---\n{RENDERED}");
        assert!(inventory_from_text(&text).is_ok());
        let two = format!("{RENDERED}---\n{RENDERED}");
        assert_eq!(
            inventory_from_text(&two).unwrap_err().to_string(),
            "2 ClusterInventory objects; expected exactly one"
        );
        assert_eq!(
            inventory_from_text("kind: ConfigMap\n")
                .unwrap_err()
                .to_string(),
            "no ClusterInventory object (found kind ConfigMap)"
        );
    }

    #[test]
    fn errors_name_the_field() {
        let err = |t: &str| crate::error::chain(&inventory_from_text(t).unwrap_err());
        assert_eq!(err(""), "empty file: expected a ClusterInventory object");
        assert!(err("{").starts_with("invalid JSON"));
        assert!(err("a: [").starts_with("invalid YAML"));
        assert!(
            err("kind: a\nkind: b\n").contains("already defined at line 1"),
            "{}",
            err("kind: a\nkind: b\n")
        );
        assert!(inventory_from_text("1: a\n[x]: b\n").is_err());
        for (from, to, want) in [
            (
                "chartVersion: 1.19.2",
                "chartVersion: 1.20",
                "spec.addons[0].chartVersion: expected a string, found a number (quote versions in YAML: '1.20' is not 1.2)",
            ),
            (
                "  specHash: abc\n",
                "",
                "spec.specHash: required field is missing",
            ),
            (
                "source: target",
                "source: other",
                "spec.addons[1].source: expected addon or target, found 'other'",
            ),
            (
                "lok8s.dev/v1alpha1",
                "example.com/v1",
                "apiVersion: expected lok8s.dev/<version>, found 'example.com/v1'",
            ),
        ] {
            assert_eq!(err(&RENDERED.replace(from, to)), want, "{from} → {to}");
        }
        assert_eq!(
            err(
                "kind: ClusterInventory\napiVersion: lok8s.dev/v1\nmetadata: {name: cluster}\nspec: []\n"
            ),
            "spec: expected an object, found a list"
        );
        assert_eq!(
            err("[1, 2]\n"),
            "no Kubernetes object found: expected a ClusterInventory"
        );
    }

    /// The duplicate-refusing JSON reader builds the value itself: nesting is still
    /// bounded by serde_json's recursion limit (an error, not a stack overflow), and a
    /// key that appears twice is refused wherever it is, naming the key and its line.
    #[test]
    fn json_is_read_within_bounds_and_without_duplicate_keys() {
        let deep = format!("{{\"a\":{}{}}}", "[".repeat(100_000), "]".repeat(100_000));
        let err = crate::error::chain(&inventory_from_text(&deep).unwrap_err());
        assert!(err.contains("recursion limit exceeded"), "{err}");
        let twice =
            "{\"kind\": \"ClusterInventory\",\n \"status\": {\"x\": [{\"a\": 1, \"a\": 2}]}}";
        let err = crate::error::chain(&inventory_from_text(twice).unwrap_err());
        assert!(err.contains("duplicate key `a` at line 2"), "{err}");
        let trailing = format!(
            "{}\n{{}}",
            serde_json::to_string(&inventory_from_text(RENDERED).unwrap()).unwrap()
        );
        let err = crate::error::chain(&inventory_from_text(&trailing).unwrap_err());
        assert!(err.contains("trailing characters at line 2"), "{err}");
    }
}
