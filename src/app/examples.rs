//! The `Examples:` block of each command's `--help` (kubectl's layout): the commands a
//! first session types, each with the one line that says what it does.

pub const RENDER: &str = "\
Examples:
  # The inventory of the active domain, as lok8s renders it
  clinv render
  # One domain, as JSON
  clinv render --domain prod.acme.example -o json
  # The CR and the CRD as two files (clusterinventory.yaml, clusterinventory.crd.yaml)
  clinv render --domain prod.acme.example --out build/";

pub const CRD: &str = "\
Examples:
  clinv crd > clusterinventory.crd.yaml
  clinv crd -o json";

pub const ADDONS: &str = "\
Examples:
  clinv addons --domain prod.acme.example
  # With each entry's folder and where it is configured
  clinv addons -o wide
  # Name=version lines for a script
  clinv addons -o jsonpath='{range .addons[*]}{.name}={.version}{\"\\n\"}{end}'";

pub const PUBLISH: &str = "\
Examples:
  # Apply to the cluster of the kubeconfig; recorded as pending when it is unreachable
  clinv publish --domain prod.acme.example
  # What the server would change, nothing persisted
  clinv publish --dry-run --kubeconfig ~/.kube/prod.yaml
  # A failure to deliver exits with its reason's code (CI)
  clinv publish --strict";

pub const STATUS: &str = "\
Examples:
  clinv status --domain prod.acme.example
  clinv status -o json
  # The newest applied snapshot when the cluster cannot be read
  clinv status --offline";

pub const REPLAY: &str = "\
Examples:
  # Deliver what is pending for every domain, each to the cluster it was published for
  clinv replay --all
  # One domain, through another kubeconfig
  clinv replay --domain prod.acme.example --kubeconfig ~/.kube/prod.yaml
  # Keep running: deliver each domain's snapshots as soon as its cluster answers
  clinv replay --watch -A --metrics-addr 127.0.0.1:9464";

#[cfg(feature = "gitops")]
pub const COMMIT: &str = "\
Examples:
  # Commit the inventory on the checked-out branch of a local clone
  clinv commit --domain prod.acme.example --repo ../gitops
  # On a new branch, pushed, for a pull request
  clinv commit --repo ../gitops --branch inventory/prod --push
  # Every domain in one commit on a branch, for one pull request
  clinv commit -A --repo ../gitops --branch inventory/bump-cilium --push
  # And print the Flux objects that sync the folder
  clinv commit --repo ../gitops --print-flux";

#[cfg(feature = "gitops")]
pub const PUSH: &str = "\
Examples:
  # Push prod's inventory to an internal registry, tagged latest and snapshot-<id>
  clinv push oci://registry.internal:5000/inventories/prod.acme.example --domain prod.acme.example
  # For Argo CD: the OCI layer type it accepts by default
  clinv push oci://registry.internal:5000/inventories/prod.acme.example --layer-media-type oci
  # A stored snapshot, with the registry's CA and credentials from the environment
  clinv push oci://registry.internal/inv/prod:v3 --snapshot latest --ca-file ca.pem --creds-env REGISTRY_AUTH";

pub const SNAPSHOTS: &str = "\
Examples:
  clinv snapshots list --state pending
  clinv snapshots show latest
  clinv snapshots gc --keep 20 --dry-run
  clinv snapshots export site-a.tar && clinv snapshots import site-a.tar";

pub const INDEX: &str = "\
Examples:
  clinv index > addons-index.json
  clinv index --out public/addons-index.json";

pub const UPDATES: &str = "\
Examples:
  # Which addons have a newer version in the index (live cluster, else the project)
  clinv updates --index https://example.com/addons-index.json
  clinv updates --index addons-index.json --offline -o json";

pub const AGENT: &str = "\
Examples:
  # In the cluster (the pod's service account): keep availableUpdates current
  clinv agent --index https://example.com/addons-index.json --interval 1h
  clinv agent --once --kubeconfig ~/.kube/prod.yaml";

pub const LOG: &str = "\
Examples:
  clinv log --domain prod.acme.example
  clinv log --since 2026-03-01 --until 2026-03-31 --oneline
  # When each version of an addon arrived and left
  clinv log --addon cert-manager
  # From the commits of a GitOps repository
  clinv log --repo ../gitops -o json";

pub const REPORT: &str = "\
Examples:
  clinv report --domain prod.acme.example --out report.html
  clinv report -o json";

pub const DRIFT: &str = "\
Examples:
  # Exit 0 in sync, 1 drifted, 2 error, 16 the cluster could not be read
  clinv drift --domain prod.acme.example
  clinv drift -o json
  # Compare with the newest applied snapshot instead of the live object
  clinv drift --offline";

pub const COMPLETIONS: &str = "\
Examples:
  # bash: in ~/.bashrc
  source <(clinv completions bash)
  clinv completions zsh --static > ~/.zfunc/_clinv";

pub const VERSION: &str = "\
Examples:
  clinv version
  clinv version -o json";

pub const FLEET: &str = "\
Examples:
  # Which version of each addon every domain runs
  clinv fleet
  # Which clusters still run cert-manager below v1.20
  clinv fleet --addon cert-manager --below v1.20
  # What the store recorded, a row per domain, for a pull request
  clinv fleet --from store --by domain -o markdown
  # What differs between two sites (exit 1 when anything does)
  clinv fleet --domain 'air-*' --against 'fsn-*'";
