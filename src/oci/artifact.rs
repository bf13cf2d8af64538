//! The inventory folder as a reproducible OCI artifact, packed as `flux push artifact`
//! packs one.
//!
//! The inventory folder as an OCI artifact, packed the way `flux push artifact` packs a
//! folder (fluxcd/pkg `oci` and `tar`): an image manifest, a config of Flux's media
//! type, one gzip'd tar layer — but reproducibly. Flux keeps the file system's modes and
//! times; here entries are in lexical order with relative slash paths, mode 0644, uid and
//! gid 0, empty owner names and time 0, and the gzip header has neither name nor time:
//! identical files give an identical digest on any machine. Pure: bytes in, bytes out.

use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::Write;

/// An OCI image manifest.
pub const MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
/// Flux's artifact config (`flux push artifact`).
pub const FLUX_CONFIG: &str = "application/vnd.cncf.flux.config.v1+json";
/// Flux's content layer: what `flux push artifact` writes.
pub const FLUX_LAYER: &str = "application/vnd.cncf.flux.content.v1.tar+gzip";
/// The OCI image layer type: what a default Argo CD repo-server accepts, and Flux's
/// `OCIRepository` takes too (it extracts layer 0 unless a `layerSelector` says otherwise).
pub const OCI_LAYER: &str = "application/vnd.oci.image.layer.v1.tar+gzip";

/// The layer's media type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LayerType {
    /// [`FLUX_LAYER`], as `flux push artifact` writes it.
    #[default]
    Flux,
    /// [`OCI_LAYER`], for Argo CD (and Flux).
    Oci,
}

impl LayerType {
    pub fn media_type(self) -> &'static str {
        match self {
            LayerType::Flux => FLUX_LAYER,
            LayerType::Oci => OCI_LAYER,
        }
    }
}

/// A blob: its bytes and their digest (`sha256:<hex>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blob {
    pub media_type: &'static str,
    pub bytes: Vec<u8>,
    pub digest: String,
}

impl Blob {
    pub fn new(media_type: &'static str, bytes: Vec<u8>) -> Blob {
        let digest = digest(&bytes);
        Blob {
            media_type,
            bytes,
            digest,
        }
    }
}

/// What a push sends: the config and layer blobs, then the manifest that names them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Artifact {
    pub config: Blob,
    pub layer: Blob,
    pub manifest: Vec<u8>,
    /// The manifest's digest: the artifact's identity.
    pub digest: String,
}

/// `sha256:<hex>` of `bytes`.
pub fn digest(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// Packs `files` as an artifact with the layer's `title` and the manifest's `annotations`.
///
/// Packs `files` (relative slash paths and contents) as an artifact whose layer has the
/// `title` (`org.opencontainers.image.title`, the file name `oras pull` writes) and whose
/// manifest carries `annotations`.
///
/// # Errors
/// Writing the tar or gzip stream into memory failed (a path too long for a tar header).
pub fn pack(
    files: &[(&str, &str)],
    layer: LayerType,
    title: &str,
    annotations: &BTreeMap<String, String>,
) -> std::io::Result<Artifact> {
    let config = Blob::new(FLUX_CONFIG, b"{}".to_vec());
    let layer = Blob::new(layer.media_type(), gzip(&tarball(files)?)?);
    let descriptor = |b: &Blob, title: Option<&str>| {
        let mut d = serde_json::json!({
            "mediaType": b.media_type,
            "digest": b.digest,
            "size": b.bytes.len(),
        });
        if let Some(t) = title {
            d["annotations"] = serde_json::json!({ "org.opencontainers.image.title": t });
        }
        d
    };
    let manifest = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": MANIFEST,
        "config": descriptor(&config, None),
        "layers": [descriptor(&layer, Some(title))],
        "annotations": annotations,
    });
    let manifest = serde_json::to_vec(&manifest).map_err(std::io::Error::other)?;
    Ok(Artifact {
        digest: digest(&manifest),
        config,
        layer,
        manifest,
    })
}

/// A tar of `files` in lexical order, each a regular file with fixed metadata.
fn tarball(files: &[(&str, &str)]) -> std::io::Result<Vec<u8>> {
    let mut sorted: Vec<&(&str, &str)> = files.iter().collect();
    sorted.sort_by_key(|(path, _)| *path);
    let mut tar = tar::Builder::new(Vec::new());
    for (path, content) in sorted {
        let mut header = tar::Header::new_ustar();
        header.set_path(path)?;
        header.set_size(content.len() as u64);
        header.set_mode(0o644);
        header.set_uid(0);
        header.set_gid(0);
        header.set_mtime(0);
        header.set_username("")?;
        header.set_groupname("")?;
        header.set_entry_type(tar::EntryType::Regular);
        header.set_cksum();
        tar.append(&header, content.as_bytes())?;
    }
    tar.into_inner()
}

/// `bytes` gzip'd with a header that has no file name and time 0.
fn gzip(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut gz = flate2::GzBuilder::new()
        .mtime(0)
        .operating_system(255)
        .write(Vec::new(), flate2::Compression::default());
    gz.write_all(bytes)?;
    gz.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    const FILES: [(&str, &str); 3] = [
        ("kustomization.yaml", "resources: []\n"),
        ("clusterinventory.yaml", "kind: ClusterInventory\n"),
        (
            "clusterinventory-crd.yaml",
            "kind: CustomResourceDefinition\n",
        ),
    ];

    fn annotations() -> BTreeMap<String, String> {
        BTreeMap::from([(
            "org.opencontainers.image.created".to_string(),
            "2026-01-01T00:00:00Z".to_string(),
        )])
    }

    #[test]
    fn identical_files_give_an_identical_digest_in_any_order() {
        let a = pack(&FILES, LayerType::Flux, "t.tar.gz", &annotations()).unwrap();
        let mut reversed = FILES;
        reversed.reverse();
        let b = pack(&reversed, LayerType::Flux, "t.tar.gz", &annotations()).unwrap();
        assert_eq!(a, b);
        let changed = [FILES[0], FILES[1], ("clusterinventory-crd.yaml", "x\n")];
        let c = pack(&changed, LayerType::Flux, "t.tar.gz", &annotations()).unwrap();
        assert_ne!(a.layer.digest, c.layer.digest);
        assert_ne!(a.digest, c.digest);
        // The layer type is the manifest's, not the content's.
        let oci = pack(&FILES, LayerType::Oci, "t.tar.gz", &annotations()).unwrap();
        assert_eq!(oci.layer.bytes, a.layer.bytes);
        assert_ne!(oci.digest, a.digest);
    }

    #[test]
    fn the_layer_is_a_sorted_tar_with_fixed_metadata_and_a_bare_gzip_header() {
        let a = pack(&FILES, LayerType::Flux, "t.tar.gz", &annotations()).unwrap();
        let gz = &a.layer.bytes;
        assert_eq!(&gz[..3], &[0x1f, 0x8b, 8]);
        assert_eq!(gz[3], 0, "no FNAME, FEXTRA or FCOMMENT flag");
        assert_eq!(&gz[4..8], &[0, 0, 0, 0], "mtime 0");
        let mut tar = Vec::new();
        flate2::read::GzDecoder::new(&gz[..])
            .read_to_end(&mut tar)
            .unwrap();
        let mut archive = tar::Archive::new(&tar[..]);
        let mut seen = Vec::new();
        for entry in archive.entries().unwrap() {
            let mut entry = entry.unwrap();
            let h = entry.header();
            assert_eq!(h.mode().unwrap(), 0o644);
            assert_eq!(
                (h.uid().unwrap(), h.gid().unwrap(), h.mtime().unwrap()),
                (0, 0, 0)
            );
            assert_eq!(h.username().unwrap(), Some(""));
            let path = entry.path().unwrap().to_string_lossy().into_owned();
            let mut content = String::new();
            entry.read_to_string(&mut content).unwrap();
            seen.push((path, content));
        }
        let mut want: Vec<(String, String)> = FILES
            .iter()
            .map(|(p, c)| (p.to_string(), c.to_string()))
            .collect();
        want.sort();
        assert_eq!(seen, want);
    }

    #[test]
    fn the_manifest_names_both_blobs_with_flux_media_types() {
        let a = pack(&FILES, LayerType::Flux, "inv.tar.gz", &annotations()).unwrap();
        let m: serde_json::Value = serde_json::from_slice(&a.manifest).unwrap();
        assert_eq!(m["schemaVersion"], 2);
        assert_eq!(m["mediaType"], MANIFEST);
        assert_eq!(m["config"]["mediaType"], FLUX_CONFIG);
        assert_eq!(m["config"]["digest"], digest(b"{}"));
        assert_eq!(m["layers"][0]["mediaType"], FLUX_LAYER);
        assert_eq!(m["layers"][0]["digest"], a.layer.digest);
        assert_eq!(m["layers"][0]["size"], a.layer.bytes.len());
        assert_eq!(
            m["layers"][0]["annotations"]["org.opencontainers.image.title"],
            "inv.tar.gz"
        );
        assert_eq!(
            m["annotations"]["org.opencontainers.image.created"],
            "2026-01-01T00:00:00Z"
        );
        assert_eq!(a.digest, digest(&a.manifest));
    }
}
