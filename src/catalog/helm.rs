//! Helm release records (Helm 3's Secret storage driver), decoded to name, version and
//! status — and nothing else.
//!
//! A record is a Secret of type `helm.sh/release.v1` whose `release` key holds base64 of
//! gzip'd JSON (the Secret's `data` is base64 again, so the API returns it encoded twice).
//! The JSON carries the chart's values and the rendered manifests, so it is decoded in
//! memory, only `name`, `version`, `info.status` and `chart.metadata.version` are kept,
//! and the buffers are dropped: no payload byte reaches a message, a log or the status.

use base64::Engine;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::io::Read;

/// Largest decompressed release JSON read (Helm caps a release at about 1 MiB stored).
const MAX_RELEASE_JSON: u64 = 32 << 20;
/// The status schema's bound on `observedAddons`.
pub const MAX_OBSERVED: usize = 512;
const MAX_NAME: usize = 253;
const MAX_VERSION: usize = 64;

/// What one release record says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Release {
    pub namespace: String,
    pub name: String,
    pub revision: u64,
    pub status: String,
    pub chart_version: Option<String>,
}

/// One `status.observedAddons` entry.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Observed {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    pub healthy: bool,
}

/// Why a record could not be decoded (no payload content, ever).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodeError {
    NotBase64,
    NotGzip,
    TooLarge,
    NotJson,
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            DecodeError::NotBase64 => "the release field is not base64",
            DecodeError::NotGzip => "the release payload is not valid gzip",
            DecodeError::TooLarge => "the release payload is too large",
            DecodeError::NotJson => "the release payload is not a Helm release record",
        })
    }
}

// Only these fields are deserialised; serde skips the rest (values, manifest, hooks).
#[derive(Deserialize)]
struct RawRelease {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    version: Option<u64>,
    #[serde(default)]
    info: Option<RawInfo>,
    #[serde(default)]
    chart: Option<RawChart>,
}

#[derive(Deserialize)]
struct RawInfo {
    #[serde(default)]
    status: Option<String>,
}

#[derive(Deserialize)]
struct RawChart {
    #[serde(default)]
    metadata: Option<RawMeta>,
}

#[derive(Deserialize)]
struct RawMeta {
    #[serde(default)]
    version: Option<String>,
}

/// Decodes the API's `data.release` of a release Secret in `namespace`.
///
/// # Errors
/// A [`DecodeError`] saying which layer failed.
pub fn decode(namespace: &str, data_release: &str) -> Result<Release, DecodeError> {
    let b64 = base64::engine::general_purpose::STANDARD;
    // The Secret layer: the API's base64 of Helm's stored bytes.
    let stored = b64
        .decode(data_release.trim())
        .map_err(|_| DecodeError::NotBase64)?;
    // Helm's layer: base64 text of the (usually gzip'd) JSON.
    let packed = b64
        .decode(trim_ascii(&stored))
        .map_err(|_| DecodeError::NotBase64)?;
    let json = if packed.starts_with(&[0x1f, 0x8b, 0x08]) {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(packed.as_slice())
            .take(MAX_RELEASE_JSON + 1)
            .read_to_end(&mut out)
            .map_err(|_| DecodeError::NotGzip)?;
        if out.len() as u64 > MAX_RELEASE_JSON {
            return Err(DecodeError::TooLarge);
        }
        out
    } else {
        // Helm reads an uncompressed record as plain JSON too.
        packed
    };
    let raw: RawRelease = serde_json::from_slice(&json).map_err(|_| DecodeError::NotJson)?;
    let name = raw
        .name
        .filter(|n| !n.is_empty())
        .ok_or(DecodeError::NotJson)?;
    Ok(Release {
        namespace: namespace.to_string(),
        name,
        revision: raw.version.unwrap_or(0),
        status: raw.info.and_then(|i| i.status).unwrap_or_default(),
        chart_version: raw
            .chart
            .and_then(|c| c.metadata)
            .and_then(|m| m.version)
            .filter(|v| !v.is_empty()),
    })
}

fn trim_ascii(bytes: &[u8]) -> &[u8] {
    bytes.trim_ascii()
}

/// `observedAddons` from Helm's release records.
///
/// `observedAddons` from release records: the highest revision per namespace/name wins;
/// a name released in several namespaces is reported once, from the byte-wise first
/// namespace; sorted by name; at most 512. `healthy` is true when that revision is
/// `deployed` (a `failed` one is listed, unhealthy).
pub fn observed(releases: &[Release]) -> Vec<Observed> {
    let mut latest: BTreeMap<(&str, &str), &Release> = BTreeMap::new();
    for r in releases {
        let key = (r.name.as_str(), r.namespace.as_str());
        match latest.get(&key) {
            Some(have) if have.revision >= r.revision => {}
            _ => {
                latest.insert(key, r);
            }
        }
    }
    // Keys sort by (name, namespace): the first of each name is its first namespace.
    let mut out: Vec<Observed> = Vec::new();
    let mut last: Option<&str> = None;
    for ((name, _), r) in &latest {
        if last == Some(*name) {
            continue;
        }
        last = Some(name);
        out.push(Observed {
            name: crate::catalog::updates::cut(name, MAX_NAME),
            version: r
                .chart_version
                .as_deref()
                .map(|v| crate::catalog::updates::cut(v, MAX_VERSION)),
            healthy: r.status == "deployed",
        });
        if out.len() == MAX_OBSERVED {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Helm's storage (JSON → gzip → base64), then the API's Secret data (base64 again).
    fn encode_for_tests(release_json: &[u8]) -> String {
        use std::io::Write;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        let _ = gz.write_all(release_json);
        let packed = gz.finish().unwrap_or_default();
        let b64 = base64::engine::general_purpose::STANDARD;
        b64.encode(b64.encode(packed))
    }

    fn record(name: &str, rev: u64, status: &str, version: &str) -> String {
        let json = serde_json::json!({
            "name": name, "namespace": "ns", "version": rev,
            "info": {"status": status, "description": "Install complete"},
            "chart": {"metadata": {"name": name, "version": version}, "values": {"password": "FAKESECRET-chart-default"}},
            "config": {"token": "FAKESECRET-user-value"},
            "manifest": "apiVersion: v1\nkind: Secret\nstringData: {a: FAKESECRET-manifest}\n"
        });
        encode_for_tests(json.to_string().as_bytes())
    }

    #[test]
    fn decodes_helm_storage_and_keeps_only_metadata() {
        let r = decode("kube-system", &record("cilium", 3, "deployed", "1.19.2")).unwrap();
        assert_eq!(
            r,
            Release {
                namespace: "kube-system".into(),
                name: "cilium".into(),
                revision: 3,
                status: "deployed".into(),
                chart_version: Some("1.19.2".into()),
            }
        );
        assert!(!format!("{r:?}").contains("FAKESECRET"));
        // Uncompressed records are read as well.
        let b64 = base64::engine::general_purpose::STANDARD;
        let plain =
            b64.encode(b64.encode(br#"{"name":"x","version":1,"info":{"status":"failed"}}"#));
        assert_eq!(decode("n", &plain).unwrap().status, "failed");
    }

    #[test]
    fn garbage_is_a_typed_error_without_content() {
        let b64 = base64::engine::general_purpose::STANDARD;
        assert_eq!(decode("n", "%%%"), Err(DecodeError::NotBase64));
        assert_eq!(
            decode("n", &b64.encode("not base64 either %")),
            Err(DecodeError::NotBase64)
        );
        let bad_gz = b64.encode(b64.encode([0x1f, 0x8b, 0x08, 0, 1, 2, 3]));
        assert_eq!(decode("n", &bad_gz), Err(DecodeError::NotGzip));
        assert_eq!(
            decode("n", &encode_for_tests(b"{\"config\": \"FAKESECRET\"")),
            Err(DecodeError::NotJson)
        );
        assert_eq!(
            decode("n", &encode_for_tests(b"[1,2]")),
            Err(DecodeError::NotJson)
        );
        assert_eq!(
            decode("n", &encode_for_tests(b"{}")),
            Err(DecodeError::NotJson)
        );
        assert!(!DecodeError::NotJson.to_string().contains("FAKESECRET"));
    }

    #[test]
    fn highest_revision_wins_and_names_collapse() {
        let r = |ns: &str, name: &str, rev: u64, status: &str, v: &str| Release {
            namespace: ns.into(),
            name: name.into(),
            revision: rev,
            status: status.into(),
            chart_version: Some(v.into()),
        };
        let got = observed(&[
            r("b", "cilium", 2, "deployed", "1.19.2"),
            r("b", "cilium", 3, "failed", "1.20.0"),
            r("a", "cert-manager", 1, "deployed", "v1.20.1"),
            r("z", "cert-manager", 9, "deployed", "v9"),
            r("a", "cert-manager", 1, "deployed", "dup"),
        ]);
        assert_eq!(
            got,
            [
                Observed {
                    name: "cert-manager".into(),
                    version: Some("v1.20.1".into()),
                    healthy: true
                },
                Observed {
                    name: "cilium".into(),
                    version: Some("1.20.0".into()),
                    healthy: false
                },
            ]
        );
        let many: Vec<Release> = (0..600)
            .map(|i| r("n", &format!("r{i:03}"), 1, "deployed", "1"))
            .collect();
        assert_eq!(observed(&many).len(), 512);
    }
}
