//! Kubeconfig files, as `publish`, `replay`, `status`, `updates` and `diff cluster` read
//! them: the texts of a `KUBECONFIG` list (the input split at NUL bytes, which no YAML
//! text holds) parsed and merged, then the chosen context's configuration loaded and the
//! target recorded with snapshots (server URL, context name) derived. Stops before a
//! client is built: that may run a kubeconfig's credential plugin (`exec:`).

use clinv::cluster;
use clinv::delivery::Target;

/// One input.
pub fn run(data: &[u8]) {
    let mut texts = Vec::new();
    for (i, part) in data.split(|b| *b == 0).enumerate() {
        let Ok(text) = std::str::from_utf8(part) else {
            return; // clinv refuses a kubeconfig that is not UTF-8 before parsing it
        };
        texts.push((format!("kubeconfig-{i}"), text.to_string()));
    }
    let Ok(kubeconfig) = cluster::parse_kubeconfigs(&texts) else {
        return;
    };
    let mut contexts: Vec<Option<String>> = vec![None];
    contexts.extend(
        kubeconfig
            .contexts
            .iter()
            .take(2)
            .map(|c| Some(c.name.clone())),
    );
    for context in contexts {
        let loaded = cluster::load_config(kubeconfig.clone(), context.as_deref());
        if let Ok((config, current)) = loaded {
            let target = Target::of(&config, current);
            let _ = clinv::store::TargetRecord::from(&target);
        }
    }
}
