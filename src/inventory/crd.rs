//! The `ClusterInventory` CRD (spec §6) as data, and a validator of its constraints.
//!
//! The `ClusterInventory` CustomResourceDefinition (spec §6), written as data, and a
//! validator that checks an object against the CRD's own constraints before it is
//! written or sent, so a bad render fails here with field paths instead of at the API
//! server.
//!
//! The schema enumerates every field and has no `x-kubernetes-preserve-unknown-fields`:
//! the API server prunes anything else, so no values blob or secret can be stored.

use crate::util::join_path;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceColumnDefinition, CustomResourceDefinition, CustomResourceDefinitionNames,
    CustomResourceDefinitionSpec, CustomResourceDefinitionVersion, CustomResourceSubresourceStatus,
    CustomResourceSubresources, CustomResourceValidation, JSON, JSONSchemaProps,
    JSONSchemaPropsOrArray,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::Value;
use std::collections::BTreeMap;

pub const GROUP: &str = "lok8s.dev";
pub const VERSION: &str = "v1alpha1";
pub const PLURAL: &str = "clusterinventories";
pub const NAME: &str = "clusterinventories.lok8s.dev";

fn string(description: &str) -> JSONSchemaProps {
    JSONSchemaProps {
        type_: Some("string".into()),
        description: Some(description.into()),
        ..Default::default()
    }
}

/// `spec.addons` maxItems: more entries are refused before output.
pub const MAX_ADDONS: usize = 256;

/// The API server's line for `count` addons, more than [`MAX_ADDONS`].
pub fn too_many_addons(count: usize) -> String {
    too_many("spec.addons", count, MAX_ADDONS as i64)
}

fn too_many(at: &str, count: usize, max: i64) -> String {
    format!("{at}: Too many: {count} items, must have at most {max}")
}

/// The Kubernetes API version the CRD types come from (k8s-openapi's enabled feature).
pub fn kubernetes_api_version() -> &'static str {
    k8s_openapi::k8s_if_1_33! { return "1.33"; }
    k8s_openapi::k8s_if_1_34! { return "1.34"; }
    k8s_openapi::k8s_if_1_35! { return "1.35"; }
    k8s_openapi::k8s_if_1_36! { return "1.36"; }
    k8s_openapi::k8s_if_1_37! { return "1.37"; }
    #[allow(unreachable_code)]
    "unknown"
}

fn limited(description: &str, max_length: i64) -> JSONSchemaProps {
    JSONSchemaProps {
        max_length: Some(max_length),
        ..string(description)
    }
}

fn matching(description: &str, pattern: &str, max_length: Option<i64>) -> JSONSchemaProps {
    JSONSchemaProps {
        pattern: Some(pattern.into()),
        max_length,
        ..string(description)
    }
}

fn object(
    description: &str,
    required: &[&str],
    props: Vec<(&str, JSONSchemaProps)>,
) -> JSONSchemaProps {
    JSONSchemaProps {
        type_: Some("object".into()),
        description: Some(description.into()),
        required: (!required.is_empty()).then(|| required.iter().map(|s| s.to_string()).collect()),
        properties: Some(props.into_iter().map(|(k, v)| (k.to_string(), v)).collect()),
        ..Default::default()
    }
}

fn array(description: &str, max_items: i64, items: JSONSchemaProps) -> JSONSchemaProps {
    JSONSchemaProps {
        type_: Some("array".into()),
        description: Some(description.into()),
        max_items: Some(max_items),
        items: Some(JSONSchemaPropsOrArray::Schema(Box::new(items))),
        ..Default::default()
    }
}

fn date_time(description: &str) -> JSONSchemaProps {
    JSONSchemaProps {
        format: Some("date-time".into()),
        ..string(description)
    }
}

/// One `spec.addons` entry.
fn addon_schema() -> JSONSchemaProps {
    object(
        "One resolved spec.bootstrap entry: a framework addon or a cluster target.",
        &["name"],
        vec![
            (
                "name",
                matching(
                    "Entry name: the addon name, the target directory's last element, or the entry's explicit name.",
                    "^[A-Za-z0-9._-]+$",
                    Some(253),
                ),
            ),
            (
                "chartVersion",
                limited(
                    "Helm chart version pinned in the addon's chart.yaml, when it has one.",
                    64,
                ),
            ),
            (
                "appVersion",
                limited("Application version shipped by the chart, when known.", 64),
            ),
            (
                "category",
                matching(
                    "Addon category from its lok8s.dev/category label.",
                    "^[a-z0-9-]+$",
                    Some(63),
                ),
            ),
            (
                "source",
                JSONSchemaProps {
                    enum_: Some(vec![
                        JSON(Value::from("addon")),
                        JSON(Value::from("target")),
                    ]),
                    ..string("Where the entry comes from: a framework addon or a cluster target.")
                },
            ),
        ],
    )
}

fn spec_schema() -> JSONSchemaProps {
    object(
        "What lok8s deployed, written by the lok8s CLI (field manager lok8s).",
        &["lok8sVersion", "kind", "specHash", "renderedAt"],
        vec![
            (
                "lok8sVersion",
                limited("The lok8s framework version that rendered the deploy.", 64),
            ),
            (
                "kind",
                matching(
                    "The cluster driver (lo, kubeone, capi, kkp).",
                    "^[a-z][a-z0-9]*$",
                    Some(63),
                ),
            ),
            (
                "provider",
                limited("The infrastructure provider (spec.provider.name).", 63),
            ),
            (
                "kubernetesVersion",
                limited(
                    "The Kubernetes version from spec.kubernetes.version, digest stripped.",
                    64,
                ),
            ),
            (
                "specHash",
                matching(
                    "SHA-256 of the cluster.lok8s.yaml bytes the deploy was built from.",
                    "^[a-f0-9]{64}$",
                    None,
                ),
            ),
            (
                "renderedAt",
                date_time("When the inventory was rendered (UTC)."),
            ),
            (
                "addons",
                array(
                    "The resolved spec.bootstrap entries, in order.",
                    MAX_ADDONS as i64,
                    addon_schema(),
                ),
            ),
        ],
    )
}

/// A status entry about one addon: its `name`, required, then `fields`.
fn addon_entry(description: &str, fields: Vec<(&str, JSONSchemaProps)>) -> JSONSchemaProps {
    let name = ("name", limited("Addon name.", 253));
    object(
        description,
        &["name"],
        std::iter::once(name).chain(fields).collect(),
    )
}

fn status_schema() -> JSONSchemaProps {
    let observed = addon_entry(
        "An addon as observed running in the cluster.",
        vec![
            ("version", limited("Observed version.", 64)),
            (
                "healthy",
                JSONSchemaProps {
                    type_: Some("boolean".into()),
                    description: Some("Whether the addon looked healthy.".into()),
                    ..Default::default()
                },
            ),
        ],
    );
    let update = addon_entry(
        "An addon with a newer version in the published addon index.",
        vec![
            ("current", limited("Version deployed now.", 64)),
            ("latest", limited("Newest version in the addon index.", 64)),
        ],
    );
    object(
        "Observed state, written by an in-cluster agent through the status subresource.",
        &[],
        vec![
            (
                "observedAddons",
                array("Addons observed running in the cluster.", 512, observed),
            ),
            (
                "availableUpdates",
                array(
                    "Addons with a newer version in the addon index.",
                    256,
                    update,
                ),
            ),
            (
                "lastReported",
                date_time("When the agent last wrote status."),
            ),
        ],
    )
}

/// The CRD as compact JSON, as the store records it.
///
/// # Errors
/// [`crate::Error::Encode`] (not expected for this type).
pub fn definition_json() -> crate::Result<String> {
    serde_json::to_string(&definition()).map_err(|e| crate::Error::encode("the CRD", e))
}

/// The CRD, as applied and written by clinv.
pub fn definition() -> CustomResourceDefinition {
    let root = object(
        "ClusterInventory records what lok8s deployed into this cluster: a cluster-scoped singleton named cluster.",
        &["spec"],
        vec![("spec", spec_schema()), ("status", status_schema())],
    );
    let column = |name: &str, type_: &str, path: &str| CustomResourceColumnDefinition {
        name: name.into(),
        type_: type_.into(),
        json_path: path.into(),
        ..Default::default()
    };
    CustomResourceDefinition {
        metadata: ObjectMeta {
            name: Some(NAME.into()),
            ..Default::default()
        },
        spec: CustomResourceDefinitionSpec {
            group: GROUP.into(),
            names: CustomResourceDefinitionNames {
                kind: "ClusterInventory".into(),
                list_kind: Some("ClusterInventoryList".into()),
                plural: PLURAL.into(),
                singular: Some("clusterinventory".into()),
                short_names: Some(vec!["clinv".into()]),
                ..Default::default()
            },
            scope: "Cluster".into(),
            versions: vec![CustomResourceDefinitionVersion {
                name: VERSION.into(),
                served: true,
                storage: true,
                subresources: Some(CustomResourceSubresources {
                    status: Some(CustomResourceSubresourceStatus(Value::Object(
                        Default::default(),
                    ))),
                    ..Default::default()
                }),
                additional_printer_columns: Some(vec![
                    column("K8s", "string", ".spec.kubernetesVersion"),
                    column("Age", "date", ".metadata.creationTimestamp"),
                ]),
                schema: Some(CustomResourceValidation {
                    open_api_v3_schema: Some(root),
                }),
                ..Default::default()
            }],
            ..Default::default()
        },
        status: None,
    }
}

/// The root `openAPIV3Schema` of [`definition`].
pub fn schema() -> JSONSchemaProps {
    definition()
        .spec
        .versions
        .into_iter()
        .next()
        .and_then(|v| v.schema)
        .and_then(|s| s.open_api_v3_schema)
        .unwrap_or_default()
}

/// Checks `value` against `schema` the way the API server would (types, required, patterns,
/// lengths, counts, enums, date-times) and returns one line per violation, each naming its
/// field path.
///
/// Unknown fields are not violations: the server prunes them.
pub fn validate(value: &Value, schema: &JSONSchemaProps) -> Vec<String> {
    let mut checker = Checker::default();
    checker.check(value, schema, "");
    checker.out
}

/// One validation: the violations found so far, and each schema pattern compiled once
/// per validation, not once per string it checks (compiling was most of the time for a
/// spec with thousands of entries).
#[derive(Default)]
struct Checker<'s> {
    out: Vec<String>,
    patterns: std::collections::HashMap<&'s str, Option<regex::Regex>>,
}

impl<'s> Checker<'s> {
    fn check(&mut self, value: &Value, schema: &'s JSONSchemaProps, path: &str) {
        let at = if path.is_empty() { "<root>" } else { path };
        let type_ok = match schema.type_.as_deref() {
            Some("object") => value.is_object(),
            Some("array") => value.is_array(),
            Some("string") => value.is_string(),
            Some("boolean") => value.is_boolean(),
            _ => true,
        };
        if !type_ok {
            self.out.push(format!(
                "{at}: must be of type {}",
                schema.type_.as_deref().unwrap_or("?")
            ));
            return;
        }
        match value {
            Value::Object(map) => {
                for field in schema.required.iter().flatten() {
                    if !map.contains_key(field) {
                        self.out
                            .push(format!("{}: Required value", join_path(path, '.', field)));
                    }
                }
                let props = schema.properties.as_ref();
                for (key, child) in map {
                    if let Some(s) = props.and_then(|p: &BTreeMap<_, _>| p.get(key)) {
                        self.check(child, s, &join_path(path, '.', key));
                    }
                }
            }
            Value::Array(items) => {
                if let Some(max) = schema.max_items
                    && items.len() as i64 > max
                {
                    self.out.push(too_many(at, items.len(), max));
                }
                if let Some(JSONSchemaPropsOrArray::Schema(s)) = &schema.items {
                    for (i, item) in items.iter().enumerate() {
                        self.check(item, s, &format!("{path}[{i}]"));
                    }
                }
            }
            Value::String(s) => self.check_string(s, schema, at),
            _ => {}
        }
    }

    fn check_string(&mut self, s: &str, schema: &'s JSONSchemaProps, at: &str) {
        let shown = shown(s);
        if let Some(max) = schema.max_length
            && s.chars().count() as i64 > max
        {
            self.out.push(format!(
                "{at}: Too long: may not be more than {max} characters (got {})",
                s.chars().count()
            ));
        }
        if let Some(pattern) = &schema.pattern
            && !self
                .patterns
                .entry(pattern)
                .or_insert_with(|| regex::Regex::new(pattern).ok())
                .as_ref()
                .is_some_and(|re| re.is_match(s))
        {
            self.out.push(format!(
                "{at}: Invalid value: {shown}: must match '{pattern}'"
            ));
        }
        if let Some(values) = &schema.enum_
            && !values.iter().any(|v| v.0.as_str() == Some(s))
        {
            let allowed: Vec<String> = values.iter().map(|v| v.0.to_string()).collect();
            self.out.push(format!(
                "{at}: Unsupported value: {shown}: supported values: {}",
                allowed.join(", ")
            ));
        }
        if schema.format.as_deref() == Some("date-time")
            && crate::util::time::parse_rfc3339(s).is_none()
        {
            self.out.push(format!(
                "{at}: Invalid value: {shown}: must be an RFC 3339 date-time"
            ));
        }
    }
}

/// A value quoted for a message, shortened so a hostile input cannot flood the terminal.
fn shown(s: &str) -> String {
    const MAX: usize = 80;
    if s.chars().count() <= MAX {
        format!("{s:?}")
    } else {
        let head: String = s.chars().take(MAX).collect();
        format!("{head:?}…")
    }
}

/// The label value rule the API server applies to `metadata.labels` (not part of the CRD
/// schema, but checked by every object's metadata validation).
pub fn validate_label_value(key: &str, value: &str) -> Option<String> {
    let ok_chars = value
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    let ends_ok = value.is_empty()
        || (value.starts_with(|c: char| c.is_ascii_alphanumeric())
            && value.ends_with(|c: char| c.is_ascii_alphanumeric()));
    if value.len() > 63 {
        Some(format!(
            "metadata.labels[{key}]: Invalid value: {}: must be no more than 63 characters",
            shown(value)
        ))
    } else if !ok_chars || !ends_ok {
        Some(format!(
            "metadata.labels[{key}]: Invalid value: {}: must begin and end with an alphanumeric character and contain only [-_.A-Za-z0-9]",
            shown(value)
        ))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// type, pattern, maxLength, maxItems
    type Constraints = (&'static str, Option<&'static str>, Option<i64>, Option<i64>);

    /// The schema's fields, one a line: path (`.`: the root), type, pattern, maxLength,
    /// maxItems (`-`: none).
    const FIELDS: &str = "
        .                                  object   -                  -    -
        spec                               object   -                  -    -
        spec.lok8sVersion                  string   -                  64   -
        spec.kind                          string   ^[a-z][a-z0-9]*$   63   -
        spec.provider                      string   -                  63   -
        spec.kubernetesVersion             string   -                  64   -
        spec.specHash                      string   ^[a-f0-9]{64}$     -    -
        spec.renderedAt                    string   -                  -    -
        spec.addons                        array    -                  -    256
        spec.addons[]                      object   -                  -    -
        spec.addons[].name                 string   ^[A-Za-z0-9._-]+$  253  -
        spec.addons[].chartVersion         string   -                  64   -
        spec.addons[].appVersion           string   -                  64   -
        spec.addons[].category             string   ^[a-z0-9-]+$       63   -
        spec.addons[].source               string   -                  -    -
        status                             object   -                  -    -
        status.observedAddons              array    -                  -    512
        status.observedAddons[]            object   -                  -    -
        status.observedAddons[].name       string   -                  253  -
        status.observedAddons[].version    string   -                  64   -
        status.observedAddons[].healthy    boolean  -                  -    -
        status.availableUpdates            array    -                  -    256
        status.availableUpdates[]          object   -                  -    -
        status.availableUpdates[].name     string   -                  253  -
        status.availableUpdates[].current  string   -                  64   -
        status.availableUpdates[].latest   string   -                  64   -
        status.lastReported                string   -                  -    -
    ";

    fn expected() -> BTreeMap<&'static str, Constraints> {
        let given = |word: &'static str| (word != "-").then_some(word);
        let number = |word| given(word).map(|n: &str| n.parse().unwrap());
        let row = |line: &'static str| {
            let w: Vec<&'static str> = line.split_whitespace().collect();
            let path = if w[0] == "." { "" } else { w[0] };
            (path, (w[1], given(w[2]), number(w[3]), number(w[4])))
        };
        FIELDS
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(row)
            .collect()
    }

    fn walk(s: &JSONSchemaProps, path: String, seen: &mut Vec<(String, JSONSchemaProps)>) {
        seen.push((path.clone(), s.clone()));
        for (k, v) in s.properties.iter().flatten() {
            walk(v, join_path(&path, '.', k), seen);
        }
        if let Some(JSONSchemaPropsOrArray::Schema(items)) = &s.items {
            walk(items, format!("{path}[]"), seen);
        }
    }

    #[test]
    fn schema_matches_the_spec_tables_and_prunes_everything_else() {
        let mut seen = Vec::new();
        walk(&schema(), String::new(), &mut seen);
        let expected = expected();
        assert_eq!(
            seen.len(),
            expected.len(),
            "fields: {:?}",
            seen.iter().map(|s| &s.0).collect::<Vec<_>>()
        );
        for (path, s) in &seen {
            let (ty, pattern, max_len, max_items) = expected
                .get(path.as_str())
                .unwrap_or_else(|| panic!("{path} is not in the spec"));
            assert_eq!(s.type_.as_deref(), Some(*ty), "{path}");
            assert_eq!(s.pattern.as_deref(), *pattern, "{path}");
            assert_eq!(s.max_length, *max_len, "{path}");
            assert_eq!(s.max_items, *max_items, "{path}");
            assert!(
                s.description.as_deref().is_some_and(|d| !d.is_empty()),
                "{path} lacks a description"
            );
            assert_eq!(s.x_kubernetes_preserve_unknown_fields, None, "{path}");
            assert!(s.additional_properties.is_none(), "{path}");
        }
        let get = |p: &str| seen.iter().find(|(k, _)| k == p).unwrap().1.clone();
        assert_eq!(get("").required, Some(vec!["spec".into()]));
        assert_eq!(
            get("spec").required,
            Some(vec![
                "lok8sVersion".into(),
                "kind".into(),
                "specHash".into(),
                "renderedAt".into()
            ])
        );
        assert_eq!(get("status").required, None);
        for p in [
            "spec.addons[]",
            "status.observedAddons[]",
            "status.availableUpdates[]",
        ] {
            assert_eq!(get(p).required, Some(vec!["name".into()]), "{p}");
        }
        assert_eq!(get("spec.renderedAt").format.as_deref(), Some("date-time"));
        assert_eq!(
            get("status.lastReported").format.as_deref(),
            Some("date-time")
        );
        let source: Vec<_> = get("spec.addons[].source")
            .enum_
            .unwrap()
            .into_iter()
            .map(|j| j.0)
            .collect();
        assert_eq!(source, [Value::from("addon"), Value::from("target")]);
        // No marker anywhere in the serialised CRD either.
        let text = serde_json::to_string(&definition()).unwrap();
        assert!(!text.contains("x-kubernetes-preserve-unknown-fields"));
        assert!(!text.contains("additionalProperties"));
    }

    #[test]
    fn crd_identity() {
        let crd = definition();
        assert_eq!(
            crd.metadata.name.as_deref(),
            Some("clusterinventories.lok8s.dev")
        );
        assert_eq!(crd.spec.group, "lok8s.dev");
        assert_eq!(crd.spec.scope, "Cluster");
        assert_eq!(crd.spec.names.short_names, Some(vec!["clinv".into()]));
        let v = &crd.spec.versions[0];
        assert!(v.served && v.storage && crd.spec.versions.len() == 1);
        let cols: Vec<_> = v
            .additional_printer_columns
            .iter()
            .flatten()
            .map(|c| (c.name.as_str(), c.type_.as_str(), c.json_path.as_str()))
            .collect();
        assert_eq!(
            cols,
            [
                ("K8s", "string", ".spec.kubernetesVersion"),
                ("Age", "date", ".metadata.creationTimestamp")
            ]
        );
        assert!(v.subresources.as_ref().unwrap().status.is_some());
    }

    #[test]
    fn validation_reports_every_violation_with_its_path() {
        let value = serde_json::json!({
            "spec": {
                "lok8sVersion": "x".repeat(65),
                "kind": "Kube-One",
                "specHash": "abc",
                "renderedAt": "yesterday",
                "addons": [{"name": "ok"}, {"name": "a/b", "source": "git", "category": "Net"}, {"source": "addon"}],
            }
        });
        let errors = validate(&value, &schema());
        let paths: Vec<&str> = errors
            .iter()
            .map(|e| e.split(':').next().unwrap())
            .collect();
        assert_eq!(
            paths,
            [
                "spec.lok8sVersion",
                "spec.kind",
                "spec.specHash",
                "spec.renderedAt",
                "spec.addons[1].name",
                "spec.addons[1].source",
                "spec.addons[1].category",
                "spec.addons[2].name",
            ],
            "{errors:#?}"
        );
        let many: Vec<Value> = (0..257)
            .map(|i| serde_json::json!({"name": format!("a{i}")}))
            .collect();
        let errors = validate(
            &serde_json::json!({"spec": {"lok8sVersion": "1", "kind": "lo", "specHash": "a".repeat(64), "renderedAt": "2023-11-14T22:13:20Z", "addons": many}}),
            &schema(),
        );
        assert_eq!(
            errors,
            ["spec.addons: Too many: 257 items, must have at most 256"]
        );
        assert_eq!(
            errors,
            [too_many_addons(257)],
            "build refuses with the same line"
        );
        assert!(validate(&serde_json::json!({}), &schema()) == ["spec: Required value"]);
    }

    /// Found while fuzzing: every pattern was compiled again for each string it checked,
    /// so an 8 MiB spec with ~1,000,000 bootstrap entries spent minutes here (these
    /// 40,000 addons about 15 s in a debug build; now well under a second). The test
    /// holds the cause, clock-free: one compiled pattern per pattern, kept.
    #[test]
    fn validating_many_addons_compiles_each_pattern_once() {
        let many: Vec<Value> = (0..40_000)
            .map(|i| serde_json::json!({"name": format!("a{i}"), "source": "addon", "chartVersion": "1.2.3", "category": "networking"}))
            .collect();
        let schema = schema();
        let mut checker = Checker::default();
        checker.check(
            &serde_json::json!({"spec": {"lok8sVersion": "1", "kind": "lo", "specHash": "a".repeat(64), "renderedAt": "2023-11-14T22:13:20Z", "addons": many}}),
            &schema,
            "",
        );
        assert_eq!(
            checker.out,
            ["spec.addons: Too many: 40000 items, must have at most 256"]
        );
        // Clock-free: every pattern checked on 40,000 strings was compiled once, kept in
        // the validation's cache (none compiled per string, beside it).
        assert!(!checker.patterns.is_empty());
        assert!(checker.patterns.values().all(Option::is_some));
        assert!(checker.patterns.len() <= 8, "{}", checker.patterns.len());
    }

    #[test]
    fn label_values() {
        assert_eq!(validate_label_value("k", "prod.acme.example"), None);
        assert!(validate_label_value("k", &"a".repeat(64)).is_some());
        assert!(validate_label_value("k", "ends-").is_some());
        assert!(validate_label_value("k", "a_b.c-d").is_none());
    }
}
