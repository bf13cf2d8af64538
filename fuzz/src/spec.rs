//! The cluster spec, as `clinv render` reads it: the bytes of `cluster.lok8s.yaml` →
//! YAML reader → spec interpretation and every `spec.bootstrap` entry → the inventory
//! (metadata read below examples/acme, a real project) → CRD validation → JSON and YAML.
//! A valid inventory must read back unchanged from both encodings (`clinv diff` reads
//! rendered files), and the `clinv addons` view is built from the same entries.

use clinv::inventory::render::{self, Format};
use clinv::project::Project;
use clinv::project::addons::{self, Reader};
use clinv::{inventory, inventory::parse, project::spec};
use std::path::PathBuf;
use std::sync::LazyLock;

const DOMAIN: &str = "prod.acme.example";
static ROOT: LazyLock<PathBuf> = LazyLock::new(|| super::repo().join("examples/acme"));

/// One input.
pub fn run(data: &[u8]) {
    let project = Project::at(&ROOT);
    let path = project
        .domain_dir(&clinv::domain::Domain::parse(DOMAIN).expect("a domain"))
        .join("cluster.lok8s.yaml");
    let Ok(spec) = spec::parse(data, &path, project.root(), DOMAIN) else {
        return;
    };
    let entries: Vec<_> = spec
        .entries
        .iter()
        .filter_map(|e| e.as_ref().ok())
        .cloned()
        .collect();
    let mut reader = Reader::new(project.root());
    let _ = addons::view_rows(&entries, project.root(), &mut reader);

    let at = jiff::Timestamp::from_second(1_700_000_000).expect("valid time");
    let Ok(built) = inventory::assemble(&project, DOMAIN, spec, "v1.2.3".into(), at) else {
        return;
    };
    for w in &built.warnings {
        let _ = (w.message.len(), w.detail.as_ref().map(String::len));
    }
    if render::validate(&built.inventory).is_err() {
        return;
    }
    for format in [Format::Json, Format::Yaml] {
        let text = render::encode(&built.inventory, format).expect("a valid inventory encodes");
        let back = parse::inventory_from_text(&text)
            .unwrap_or_else(|e| panic!("rendered {format:?} does not read back: {e}\n{text}"));
        assert_eq!(
            back, built.inventory,
            "{format:?} round trip changed the inventory"
        );
    }
}
