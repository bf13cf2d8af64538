//! Reading an inventory artifact back, unpacked in memory within bounds.
//!
//! Reading an inventory artifact back: its manifest's one content layer (Flux's or the
//! OCI tar+gzip type), unpacked in memory within bounds — a hostile registry can make
//! clinv neither write a file nor hold more than [`MAX_FILES`] bytes. Pure: bytes in,
//! files out.

use super::artifact::{FLUX_LAYER, OCI_LAYER};
use crate::error::PullProblem;
use std::collections::BTreeMap;
use std::io::Read;

/// Largest manifest read.
pub const MAX_MANIFEST: u64 = 4 << 20;
/// Largest compressed layer read.
pub const MAX_LAYER: u64 = 16 << 20;
/// Largest sum of the unpacked files.
const MAX_FILES: u64 = 32 << 20;
/// Most entries in a layer.
const MAX_ENTRIES: usize = 1000;

/// What an artifact manifest names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    pub layer: String,
    pub layer_size: u64,
    pub annotations: BTreeMap<String, String>,
}

/// Reads an image manifest holding exactly one tar+gzip content layer.
///
/// # Errors
/// Not a manifest, another layer count or type, a layer over [`MAX_LAYER`].
pub fn manifest(bytes: &[u8]) -> Result<Manifest, PullProblem> {
    let doc: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|_| PullProblem::NotAManifest)?;
    let layers = doc["layers"].as_array().ok_or(PullProblem::NotAManifest)?;
    let [layer] = layers.as_slice() else {
        return Err(PullProblem::LayerCount(layers.len()));
    };
    let media = layer["mediaType"].as_str().unwrap_or_default();
    if media != FLUX_LAYER && media != OCI_LAYER {
        return Err(PullProblem::LayerType(crate::util::redact::detail(media)));
    }
    let digest = layer["digest"].as_str().ok_or(PullProblem::NotAManifest)?;
    let size = layer["size"].as_u64().ok_or(PullProblem::NotAManifest)?;
    if size > MAX_LAYER {
        return Err(PullProblem::TooLarge(MAX_LAYER));
    }
    let annotations = doc["annotations"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
        .collect();
    Ok(Manifest {
        layer: digest.to_string(),
        layer_size: size,
        annotations,
    })
}

/// The files of a gzip'd tar layer: relative slash paths and UTF-8 contents.
///
/// # Errors
/// Not a gzip'd tar; an entry that is not a plain relative file (a link, `..`, an
/// absolute path); text that is not UTF-8; more than the bounds allow.
pub fn unpack(gz: &[u8]) -> Result<Vec<(String, String)>, PullProblem> {
    let bad = |e: std::io::Error| PullProblem::NotTarGzip(e.to_string());
    let tar = flate2::read::GzDecoder::new(gz).take(MAX_FILES + 1);
    let mut archive = tar::Archive::new(tar);
    let mut files = Vec::new();
    let mut total = 0u64;
    for entry in archive.entries().map_err(bad)? {
        let mut entry = entry.map_err(bad)?;
        let path = entry.path().map_err(bad)?.to_string_lossy().into_owned();
        let kind = entry.header().entry_type();
        if kind.is_dir() {
            continue;
        }
        let relative = std::path::Path::new(&path)
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
        if !kind.is_file() || !relative || path.is_empty() {
            return Err(PullProblem::UnsafeEntry(crate::util::redact::detail(&path)));
        }
        total += entry.size();
        if total > MAX_FILES || files.len() >= MAX_ENTRIES {
            return Err(PullProblem::TooLarge(MAX_FILES));
        }
        let mut text = String::new();
        entry
            .read_to_string(&mut text)
            .map_err(|_| PullProblem::NotText(crate::util::redact::detail(&path)))?;
        files.push((path.trim_start_matches("./").to_string(), text));
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oci::artifact::{LayerType, pack};

    fn packed() -> crate::oci::Artifact {
        let files = [("b.yaml", "b\n"), ("a.yaml", "a\n")];
        let notes = BTreeMap::from([("k".to_string(), "v".to_string())]);
        pack(&files, LayerType::Flux, "t.tar.gz", &notes).unwrap()
    }

    #[test]
    fn a_packed_artifact_reads_back_as_its_files() {
        let a = packed();
        let m = manifest(&a.manifest).unwrap();
        assert_eq!(m.layer, a.layer.digest);
        assert_eq!(m.annotations["k"], "v");
        let files = unpack(&a.layer.bytes).unwrap();
        assert_eq!(
            files,
            [
                ("a.yaml".into(), "a\n".into()),
                ("b.yaml".into(), "b\n".into())
            ]
        );
    }

    #[test]
    fn hostile_manifests_and_layers_are_refused() {
        assert_eq!(manifest(b"[]"), Err(PullProblem::NotAManifest));
        let two = br#"{"layers":[{},{}]}"#;
        assert_eq!(manifest(two), Err(PullProblem::LayerCount(2)));
        let odd = br#"{"layers":[{"mediaType":"text/plain","digest":"x","size":1}]}"#;
        assert!(matches!(manifest(odd), Err(PullProblem::LayerType(_))));
        let big = format!(
            r#"{{"layers":[{{"mediaType":"{OCI_LAYER}","digest":"x","size":{}}}]}}"#,
            MAX_LAYER + 1
        );
        assert_eq!(
            manifest(big.as_bytes()),
            Err(PullProblem::TooLarge(MAX_LAYER))
        );
        assert!(matches!(
            unpack(b"not gzip"),
            Err(PullProblem::NotTarGzip(_))
        ));
        // A link, and a path that climbs out.
        for (path, kind) in [
            ("x", tar::EntryType::Symlink),
            ("../x", tar::EntryType::Regular),
        ] {
            let mut header = tar::Header::new_gnu();
            header.as_gnu_mut().unwrap().name[..path.len()].copy_from_slice(path.as_bytes());
            header.set_entry_type(kind);
            header.set_size(0);
            header.set_cksum();
            let mut b = tar::Builder::new(Vec::new());
            b.append(&header, &[][..]).unwrap();
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            std::io::Write::write_all(&mut gz, &b.into_inner().unwrap()).unwrap();
            let layer = gz.finish().unwrap();
            assert!(
                matches!(unpack(&layer), Err(PullProblem::UnsafeEntry(_))),
                "{path}"
            );
        }
    }
}
