//! The snapshot store's readers: a domain's journal (`<sha256> <json>` lines), an
//! exported journal, and a stored CR object.
//!
//! The first byte picks the mode, the rest is the input:
//! - `0`: raw journal bytes (checksums as given — mostly damage reports);
//! - `1`: journal lines given without checksums; the harness prefixes each complete line
//!   with its correct sha256 so the record parser is reached (a fuzzer cannot forge
//!   checksums); an unterminated last line stays torn;
//! - `2`: a CR object (`objects/<sha>.json`), read back as `snapshots show` and
//!   `replay` do, then validated and encoded like a fresh render;
//! - `3`: a `snapshots export` archive (tar), read and verified as `snapshots import`
//!   does before it writes anything.
//!
//! Every journal is then used as the commands use it: references (`latest`, `latest~N`,
//! an id prefix), `gc` candidates, `snapshots list/show -o json`.

use clinv::history::refs::SnapshotRef;
use clinv::inventory::render::{self, Format};
use clinv::store;
use sha2::{Digest, Sha256};
use std::path::Path;

/// One input.
pub fn run(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    match mode % 4 {
        0 => journal(rest),
        1 => journal(&with_checksums(rest)),
        2 => object(rest),
        _ => export(rest),
    }
}

fn with_checksums(lines: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(lines.len() + 80);
    let mut parts = lines.split(|b| *b == b'\n').peekable();
    while let Some(line) = parts.next() {
        if parts.peek().is_none() {
            out.extend_from_slice(line); // the torn tail (empty when terminated)
            break;
        }
        let sum: String = Sha256::digest(line)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        out.extend_from_slice(sum.as_bytes());
        out.push(b' ');
        out.extend_from_slice(line);
        out.push(b'\n');
    }
    out
}

fn journal(bytes: &[u8]) {
    let journal = store::journal::parse_journal(Path::new("journal"), bytes);
    for d in &journal.damage {
        let _ = d.to_string();
    }
    let listing = store::scan::read_bytes(Path::new("journal"), bytes);
    for reference in [
        "latest",
        "latest~1",
        "latest~18446744073709551615",
        "@2026-01-01",
    ] {
        if let Ok(selector) = store::parse_ref(reference) {
            let _ = store::resolve(&listing, &selector);
        }
    }
    if let Some(s) = journal.snapshots.last() {
        let prefix: String = s.record.id.chars().take(4).collect();
        for id in [prefix.as_str(), s.record.id.as_str()] {
            let _ = store::resolve(&listing, &SnapshotRef::Id(id.to_string()));
        }
    }
    for keep in [0, 1, 20] {
        let _ = store::gc::doomed(&listing, keep);
    }
    let listed: Vec<_> = journal.newest_first().collect();
    let _ = serde_json::to_string(&listed);
}

fn object(bytes: &[u8]) {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return;
    };
    let Ok(inventory) = store::inventory_from_object(text, "2026-01-01T00:00:00Z") else {
        return;
    };
    if render::validate(&inventory).is_ok() {
        let _ = render::encode(&inventory, Format::Json);
        let _ = render::encode(&inventory, Format::Yaml);
    }
}

fn export(bytes: &[u8]) {
    let _ = store::import::check_archive(|| Ok(bytes));
}
