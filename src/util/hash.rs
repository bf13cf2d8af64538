//! Leaf: the content hash of the spec (`specHash`) and of every stored object.

use sha2::{Digest, Sha256};

/// Lowercase hex SHA-256.
pub fn hex_sha256(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for b in digest {
        use std::fmt::Write;
        let _ = write!(out, "{b:02x}");
    }
    out
}

/// The 32 bytes of a lowercase or uppercase hex sha256 (an object id), `None` for
/// anything else: a set of ids held as these takes 32 bytes an id, not 88.
pub fn sha256_bytes(hex: &str) -> Option<[u8; 32]> {
    let hex = hex.as_bytes();
    if hex.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (byte, pair) in out.iter_mut().zip(hex.chunks_exact(2)) {
        let digit = |c: u8| char::from(c).to_digit(16);
        *byte = u8::try_from(digit(pair[0])? << 4 | digit(pair[1])?).ok()?;
    }
    Some(out)
}
