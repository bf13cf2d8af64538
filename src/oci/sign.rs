//! cosign's key-pair signatures in the `.sig`-tag format.
//!
//! cosign's key-pair signatures in the `.sig`-tag format (cosign's `SIGNATURE_SPEC.md`):
//! the one every registry can hold (Debian's distribution 2.8 has no referrers API) and
//! Flux's `OCIRepository` verifies with `spec.verify.provider: cosign` and a public key.
//!
//! The signed artifact `…@sha256:<hex>` gets a manifest at tag `sha256-<hex>.sig` in the
//! same repository; each layer is a simple-signing payload (the artifact's digest and
//! repository) whose ECDSA P-256 / SHA-256 signature, base64 of ASN.1 DER, is the layer's
//! `dev.cosignproject.cosign/signature` annotation. Pure: bytes in, bytes out; the
//! cryptography is `ring`'s (already linked by rustls).

use super::artifact::{Blob, MANIFEST, digest};
use crate::error::KeyProblem;
use base64::Engine as _;
use ring::signature::{self as sig, KeyPair as _};
use rustls_pki_types::pem::{PemObject as _, SectionKind};

/// The media type of a simple-signing payload layer.
pub const SIMPLE_SIGNING: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
/// The layer annotation holding the signature.
pub const SIGNATURE: &str = "dev.cosignproject.cosign/signature";
/// The signature manifest's config (an empty image config, as cosign writes).
const IMAGE_CONFIG: &str = "application/vnd.oci.image.config.v1+json";
/// The payload's `critical.type`.
const PAYLOAD_TYPE: &str = "cosign container image signature";
/// DER of a P-256 `SubjectPublicKeyInfo` up to the 65-byte uncompressed point: the
/// algorithm `id-ecPublicKey` with the curve `prime256v1`, then the bit string header.
const P256_SPKI_PREFIX: [u8; 26] = [
    0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a,
    0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
];

/// The tag of `digest`'s signatures: `sha256-<hex>.sig`.
pub fn tag(digest: &str) -> String {
    format!("{}.sig", digest.replacen(':', "-", 1))
}

/// The simple-signing payload for the artifact `digest` in `repository`
/// (`registry/repository`, as cosign names it), serialised as cosign does.
pub fn payload(repository: &str, digest: &str) -> Vec<u8> {
    let doc = serde_json::json!({
        "critical": {
            "identity": { "docker-reference": repository },
            "image": { "docker-manifest-digest": digest },
            "type": PAYLOAD_TYPE,
        },
        "optional": null,
    });
    doc.to_string().into_bytes()
}

/// The artifact digest a payload vouches for, when it is a cosign payload.
pub fn claimed_digest(payload: &[u8]) -> Option<String> {
    let doc: serde_json::Value = serde_json::from_slice(payload).ok()?;
    let critical = &doc["critical"];
    if critical["type"] != PAYLOAD_TYPE {
        return None;
    }
    critical["image"]["docker-manifest-digest"]
        .as_str()
        .map(str::to_string)
}

/// A private ECDSA P-256 key: PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`), or cosign's
/// encrypted key (`cosign generate-key-pair`) opened with a password.
pub struct SigningKey {
    pair: sig::EcdsaKeyPair,
    rng: ring::rand::SystemRandom,
}

impl SigningKey {
    /// Reads a PEM key; cosign's encrypted key opens with `password` (`None`: not given).
    ///
    /// # Errors
    /// What the file holds instead (a SEC1 or RSA key, no PEM); an encrypted key without
    /// its password or with a wrong one.
    pub fn from_pem(pem: &[u8], password: Option<&str>) -> Result<SigningKey, KeyProblem> {
        if let Some(sealed) = encrypted_cosign_key(pem) {
            let password = password.ok_or(KeyProblem::NoPassword)?;
            let der = open_cosign_key(&sealed, password.as_bytes())?;
            return SigningKey::from_pkcs8(&der);
        }
        let der = pem_section(pem, |kind| {
            matches!(
                kind,
                SectionKind::PrivateKey | SectionKind::EcPrivateKey | SectionKind::RsaPrivateKey
            )
        })?;
        match der {
            (SectionKind::PrivateKey, der) => SigningKey::from_pkcs8(&der),
            (SectionKind::EcPrivateKey, _) => Err(KeyProblem::Sec1),
            _ => Err(KeyProblem::NotP256),
        }
    }

    fn from_pkcs8(der: &[u8]) -> Result<SigningKey, KeyProblem> {
        let rng = ring::rand::SystemRandom::new();
        let alg = &sig::ECDSA_P256_SHA256_ASN1_SIGNING;
        let pair =
            sig::EcdsaKeyPair::from_pkcs8(alg, der, &rng).map_err(|_| KeyProblem::NotP256)?;
        Ok(SigningKey { pair, rng })
    }

    /// The key's public half.
    pub fn public(&self) -> PublicKey {
        PublicKey {
            point: self.pair.public_key().as_ref().to_vec(),
        }
    }

    /// The signature of `payload`: base64 of ASN.1 DER, as cosign stores it.
    ///
    /// # Errors
    /// The system's random source failed.
    pub fn sign(&self, payload: &[u8]) -> Result<String, KeyProblem> {
        let signature = self
            .pair
            .sign(&self.rng, payload)
            .map_err(|_| KeyProblem::Random)?;
        Ok(base64::engine::general_purpose::STANDARD.encode(signature.as_ref()))
    }
}

/// A public ECDSA P-256 key: PEM `PUBLIC KEY` (what `cosign generate-key-pair` writes to
/// `cosign.pub`, and `openssl ec -pubout` prints).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicKey {
    /// The uncompressed point (65 bytes).
    point: Vec<u8>,
}

impl PublicKey {
    /// Reads a PEM public key.
    ///
    /// # Errors
    /// No `PUBLIC KEY` section, or a key that is not ECDSA P-256.
    pub fn from_pem(pem: &[u8]) -> Result<PublicKey, KeyProblem> {
        let (_, der) = pem_section(pem, |kind| kind == SectionKind::PublicKey)?;
        match der.strip_prefix(&P256_SPKI_PREFIX[..]) {
            Some(point) if point.len() == 65 && point[0] == 4 => Ok(PublicKey {
                point: point.to_vec(),
            }),
            _ => Err(KeyProblem::NotP256),
        }
    }

    /// Whether `signature` (base64 of ASN.1 DER) signs `payload` with this key.
    pub fn verifies(&self, payload: &[u8], signature: &str) -> bool {
        let Ok(der) = base64::engine::general_purpose::STANDARD.decode(signature.trim()) else {
            return false;
        };
        sig::UnparsedPublicKey::new(&sig::ECDSA_P256_SHA256_ASN1, &self.point)
            .verify(payload, &der)
            .is_ok()
    }
}

/// One layer of a signature manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layer {
    pub digest: String,
    pub size: u64,
    /// The `dev.cosignproject.cosign/signature` annotation (empty when missing).
    pub signature: String,
    /// The layer's other annotations (a certificate, a bundle), kept as they are.
    pub annotations: serde_json::Map<String, serde_json::Value>,
}

/// The simple-signing layers of a signature manifest (others are ignored).
pub fn layers(manifest: &[u8]) -> Vec<Layer> {
    let Ok(doc) = serde_json::from_slice::<serde_json::Value>(manifest) else {
        return Vec::new();
    };
    let Some(layers) = doc["layers"].as_array() else {
        return Vec::new();
    };
    layers
        .iter()
        .filter(|l| l["mediaType"] == SIMPLE_SIGNING)
        .filter_map(|l| {
            let mut annotations = l["annotations"].as_object().cloned().unwrap_or_default();
            let signature = match annotations.remove(SIGNATURE) {
                Some(serde_json::Value::String(s)) => s,
                _ => String::new(),
            };
            Some(Layer {
                digest: l["digest"].as_str()?.to_string(),
                size: l["size"].as_u64()?,
                signature,
                annotations,
            })
        })
        .collect()
}

/// A signature manifest holding `layers`, and its config blob.
pub fn manifest(layers: &[Layer]) -> (Blob, Vec<u8>) {
    let epoch = "0001-01-01T00:00:00Z";
    let config = serde_json::json!({
        "architecture": "",
        "created": epoch,
        "history": layers.iter().map(|_| serde_json::json!({ "created": epoch })).collect::<Vec<_>>(),
        "os": "",
        "rootfs": {
            "type": "layers",
            "diff_ids": layers.iter().map(|l| l.digest.as_str()).collect::<Vec<_>>(),
        },
        "config": {},
    });
    let config = config.to_string().into_bytes();
    let config = Blob {
        media_type: IMAGE_CONFIG,
        digest: digest(&config),
        bytes: config,
    };
    let manifest = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": MANIFEST,
        "config": {
            "mediaType": IMAGE_CONFIG,
            "size": config.bytes.len(),
            "digest": config.digest,
        },
        "layers": layers.iter().map(|l| {
            let mut annotations = l.annotations.clone();
            annotations.insert(SIGNATURE.into(), l.signature.clone().into());
            serde_json::json!({
                "mediaType": SIMPLE_SIGNING,
                "size": l.size,
                "digest": l.digest,
                "annotations": annotations,
            })
        }).collect::<Vec<_>>(),
    });
    (config, manifest.to_string().into_bytes())
}

/// The body of `cosign generate-key-pair`'s encrypted key (PEM `ENCRYPTED SIGSTORE
/// PRIVATE KEY`, or `ENCRYPTED COSIGN PRIVATE KEY` before cosign 2), base64-decoded.
fn encrypted_cosign_key(pem: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(pem).ok()?;
    ["SIGSTORE", "COSIGN"].iter().find_map(|who| {
        let begin = format!("-----BEGIN ENCRYPTED {who} PRIVATE KEY-----");
        let end = format!("-----END ENCRYPTED {who} PRIVATE KEY-----");
        let body = text.split_once(&begin)?.1.split_once(&end)?.0;
        let joined: String = body.split_whitespace().collect();
        Some(
            base64::engine::general_purpose::STANDARD
                .decode(joined)
                .unwrap_or_default(),
        )
    })
}

/// Opens cosign's sealed key (go-securesystemslib `encrypted`: a JSON document naming
/// scrypt's parameters and salt, the secretbox nonce and the ciphertext): the PKCS#8 key.
fn open_cosign_key(sealed: &[u8], password: &[u8]) -> Result<Vec<u8>, KeyProblem> {
    use crypto_secretbox::aead::{Aead, KeyInit};
    let bad = || KeyProblem::BadEncryptedKey;
    let doc: serde_json::Value = serde_json::from_slice(sealed).map_err(|_| bad())?;
    let b64 = |v: &serde_json::Value| {
        let text = v.as_str().ok_or_else(bad)?;
        base64::engine::general_purpose::STANDARD
            .decode(text)
            .map_err(|_| bad())
    };
    let (kdf, cipher) = (&doc["kdf"], &doc["cipher"]);
    if kdf["name"] != "scrypt" || cipher["name"] != "nacl/secretbox" {
        return Err(bad());
    }
    let param = |k: &str| kdf["params"][k].as_u64().ok_or_else(bad);
    let (n, r, p) = (param("N")?, param("r")?, param("p")?);
    let bounded = (2..=1 << 20).contains(&n) && (1..=16).contains(&r) && (1..=4).contains(&p);
    if !n.is_power_of_two() || !bounded {
        return Err(bad());
    }
    let params =
        scrypt::Params::new(n.trailing_zeros() as u8, r as u32, p as u32, 32).map_err(|_| bad())?;
    let mut key = [0u8; 32];
    scrypt::scrypt(password, &b64(&kdf["salt"])?, &params, &mut key).map_err(|_| bad())?;
    let nonce = b64(&cipher["nonce"])?;
    if nonce.len() != 24 {
        return Err(bad());
    }
    let secretbox = crypto_secretbox::XSalsa20Poly1305::new(&key.into());
    secretbox
        .decrypt(nonce.as_slice().into(), b64(&doc["ciphertext"])?.as_slice())
        .map_err(|_| KeyProblem::WrongPassword)
}

/// The first PEM section whose kind `wanted` accepts.
fn pem_section(
    pem: &[u8],
    wanted: impl Fn(SectionKind) -> bool,
) -> Result<(SectionKind, Vec<u8>), KeyProblem> {
    for item in <(SectionKind, Vec<u8>)>::pem_slice_iter(pem) {
        match item {
            Ok((kind, der)) if wanted(kind) => return Ok((kind, der)),
            Ok(_) => {}
            Err(_) => return Err(KeyProblem::NotPem),
        }
    }
    Err(KeyProblem::NotPem)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh P-256 key made at test time: (private PKCS#8 DER, private PEM, public
    /// PEM). No key is committed.
    fn fresh_key() -> (Vec<u8>, String, String) {
        let rng = ring::rand::SystemRandom::new();
        let alg = &sig::ECDSA_P256_SHA256_ASN1_SIGNING;
        let der = sig::EcdsaKeyPair::generate_pkcs8(alg, &rng).unwrap();
        let pair = sig::EcdsaKeyPair::from_pkcs8(alg, der.as_ref(), &rng).unwrap();
        let mut spki = P256_SPKI_PREFIX.to_vec();
        spki.extend_from_slice(pair.public_key().as_ref());
        let (private, public) = (pem("PRIVATE KEY", der.as_ref()), pem("PUBLIC KEY", &spki));
        (der.as_ref().to_vec(), private, public)
    }

    fn pem(label: &str, der: &[u8]) -> String {
        let b64 = base64::engine::general_purpose::STANDARD.encode(der);
        let lines: Vec<&str> = b64
            .as_bytes()
            .chunks(64)
            .map(|c| std::str::from_utf8(c).unwrap())
            .collect();
        format!(
            "-----BEGIN {label}-----\n{}\n-----END {label}-----\n",
            lines.join("\n")
        )
    }

    #[test]
    fn a_signature_verifies_with_the_public_half_only_over_its_payload() {
        let (_, private, public) = fresh_key();
        let key = SigningKey::from_pem(private.as_bytes(), None).unwrap();
        let public = PublicKey::from_pem(public.as_bytes()).unwrap();
        assert_eq!(key.public(), public);
        let p = payload("r.example/fleet/a", "sha256:00");
        let s = key.sign(&p).unwrap();
        assert!(public.verifies(&p, &s));
        assert!(!public.verifies(&payload("r.example/fleet/a", "sha256:01"), &s));
        assert!(!public.verifies(&p, "not base64"));
        assert_eq!(claimed_digest(&p).as_deref(), Some("sha256:00"));
        assert_eq!(claimed_digest(b"{\"critical\":{}}"), None);
    }

    #[test]
    fn keys_that_cannot_sign_are_named() {
        let (_, private, public) = fresh_key();
        let encrypted = "-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED SIGSTORE PRIVATE KEY-----\n";
        let problem = |pem: &str| SigningKey::from_pem(pem.as_bytes(), None).err();
        assert_eq!(problem(encrypted), Some(KeyProblem::NoPassword));
        assert_eq!(
            SigningKey::from_pem(encrypted.as_bytes(), Some("")).err(),
            Some(KeyProblem::BadEncryptedKey)
        );
        assert_eq!(problem("no pem here"), Some(KeyProblem::NotPem));
        assert_eq!(problem(&public), Some(KeyProblem::NotPem));
        let sec1 = "-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n";
        assert_eq!(problem(sec1), Some(KeyProblem::Sec1));
        assert_eq!(
            PublicKey::from_pem(private.as_bytes()).err(),
            Some(KeyProblem::NotPem)
        );
    }

    /// Seals a PKCS#8 key as `cosign generate-key-pair` does (go-securesystemslib's
    /// `encrypted`: scrypt N = 65536, r = 8, p = 1 over the password; NaCl secretbox with
    /// a random nonce; the JSON document base64'd in an `ENCRYPTED SIGSTORE PRIVATE KEY`
    /// block) — made at test time, so no key is committed.
    fn cosign_sealed(der: &[u8], password: &str) -> String {
        use crypto_secretbox::aead::{Aead, KeyInit};
        use ring::rand::SecureRandom;
        let rng = ring::rand::SystemRandom::new();
        let (mut salt, mut nonce) = ([0u8; 32], [0u8; 24]);
        rng.fill(&mut salt).unwrap();
        rng.fill(&mut nonce).unwrap();
        let params = scrypt::Params::new(16, 8, 1, 32).unwrap();
        let mut key = [0u8; 32];
        scrypt::scrypt(password.as_bytes(), &salt, &params, &mut key).unwrap();
        let sealed = crypto_secretbox::XSalsa20Poly1305::new(&key.into())
            .encrypt(nonce.as_slice().into(), der)
            .unwrap();
        let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
        let doc = serde_json::json!({
            "kdf": {"name": "scrypt", "params": {"N": 65536, "r": 8, "p": 1}, "salt": b64(&salt)},
            "cipher": {"name": "nacl/secretbox", "nonce": b64(&nonce)},
            "ciphertext": b64(&sealed),
        });
        pem("ENCRYPTED SIGSTORE PRIVATE KEY", doc.to_string().as_bytes())
    }

    #[test]
    fn cosigns_encrypted_key_opens_with_its_password_only() {
        let (der, _, public) = fresh_key();
        let sealed = cosign_sealed(&der, "");
        let key = SigningKey::from_pem(sealed.as_bytes(), Some("")).unwrap();
        assert_eq!(
            key.public(),
            PublicKey::from_pem(public.as_bytes()).unwrap()
        );
        let p = payload("r.example/a", "sha256:00");
        assert!(key.public().verifies(&p, &key.sign(&p).unwrap()));
        assert_eq!(
            SigningKey::from_pem(sealed.as_bytes(), Some("wrong")).err(),
            Some(KeyProblem::WrongPassword)
        );
        // cosign 1's label opens the same way.
        let old = sealed.replace("SIGSTORE", "COSIGN");
        assert!(SigningKey::from_pem(old.as_bytes(), Some("")).is_ok());
    }

    #[test]
    fn the_signature_manifest_names_its_tag_config_and_layers() {
        assert_eq!(tag("sha256:abc"), "sha256-abc.sig");
        let layer = Layer {
            digest: "sha256:11".into(),
            size: 3,
            signature: "c2ln".into(),
            annotations: serde_json::Map::new(),
        };
        let (config, manifest) = manifest(std::slice::from_ref(&layer));
        let m: serde_json::Value = serde_json::from_slice(&manifest).unwrap();
        assert_eq!(m["config"]["digest"], config.digest);
        assert_eq!(m["layers"][0]["mediaType"], SIMPLE_SIGNING);
        assert_eq!(m["layers"][0]["annotations"][SIGNATURE], "c2ln");
        assert_eq!(layers(&manifest), vec![layer]);
        let c: serde_json::Value = serde_json::from_slice(&config.bytes).unwrap();
        assert_eq!(c["rootfs"]["diff_ids"][0], "sha256:11");
    }
}
