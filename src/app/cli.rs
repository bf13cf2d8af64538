//! Command-line interface: clap types only. They are turned into [`crate::app::settings`]
//! once and go no deeper than the command functions.

use crate::app::examples;
use crate::app::output::ColorChoice;
pub use crate::view::format::{
    DiffFormat, DocFormat, DriftFormat, EventFormat, FleetBy, FleetFormat, LogFormat, PushFormat,
    ReportFormat, ResultsFormat, SortKey, StatusFormat, TableFormat, TextFormat,
};
use crate::view::jsonpath::Template;
use clap::builder::{PossibleValue, TypedValueParser};
use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::ffi::OsStr;
use std::marker::PhantomData;
use std::path::PathBuf;

const EXIT_CODES: &str = "\
Exit codes:
  0  success (fail-soft commands also exit 0 after a warning)
  1  invalid input, a refused render, or a failed command
  2  usage error (unknown flag, bad value, unsupported -o format, a jsonpath template
     that does not parse, a --kubeconfig or --context that names nothing)
  3-10  with --strict, why publish/replay/status/agent could not deliver: 3 no kubeconfig,
     4 unusable kubeconfig or context, 5 unreachable, 6 unauthorized (401), 7 forbidden
     (403), 8 conflict with another field manager, 9 server error (5xx), 10 rejected
  11 publish neither applied nor recorded the inventory, or commit could not record its
     render (always, even without --strict)
  12 another domain's inventory is live there (domain-mismatch; always): publish and
     replay leave it (--take-over applies over it), status, drift and fleet --from live
     say so instead of reading it as this domain's
  13-15  with --strict: 13 the target holds an inventory rendered later (clock skew;
     --allow-older), 14 managed by GitOps (Flux, Argo CD: clinv commit is the channel),
     15 the server's certificate does not verify
  16 status, drift, updates: the live cluster could not be read (the answer says so)
  17 --verify: the OCI artifact is unsigned, or not signed by the key
  18 replay --watch: another loop already serves this store (its pid is named)
  130/143  ended by SIGINT/SIGTERM at a safe point
clinv diff and clinv drift: 0 same, 1 different, 2 any error or unknown.";

/// Offline-first exporter for the lok8s ClusterInventory.
///
/// clinv reads a lok8s project (.lok8s/, clusters/<domain>/cluster.lok8s.yaml) and renders
/// the ClusterInventory custom resource and its CRD exactly as lok8s does.
#[derive(Debug, Parser)]
#[command(name = "clinv", version, propagate_version = true, after_help = EXIT_CODES)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,

    /// `clinv --kubeconfig K publish`: accepted before the command name too (kubectl's
    /// habit), for the commands that talk to a cluster; the others refuse it.
    #[arg(long, value_name = "FILE", hide = true)]
    pub kubeconfig: Option<PathBuf>,

    #[arg(long, value_name = "NAME", hide = true)]
    pub context: Option<String>,

    #[command(subcommand)]
    pub command: Command,
}

impl Command {
    /// The cluster flags of a command that talks to a cluster.
    pub fn cluster_mut(&mut self) -> Option<&mut ClusterArgs> {
        match self {
            Command::Publish(a) => Some(&mut a.limits),
            Command::Status(a) => Some(&mut a.out.status.limits),
            Command::Drift(a) => Some(&mut a.out.status.limits),
            Command::Replay(a) => Some(&mut a.limits),
            Command::Updates(a) => Some(&mut a.limits),
            Command::Agent(a) => Some(&mut a.limits),
            Command::Diff(a) => Some(&mut a.limits),
            _ => None,
        }
    }
}

/// The help heading of the flags every command accepts: listed after a command's own.
const GLOBAL: &str = "Global options";

/// The help heading of the flags of the commands that talk to a cluster.
const CLUSTER: &str = "Cluster options";

/// Flags accepted before or after the command name.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Project root (default: nearest ancestor holding .lok8s/ or clusters/).
    #[arg(long, global = true, help_heading = GLOBAL, value_name = "DIR")]
    pub root: Option<PathBuf>,

    /// Snapshot store (default: <root>/snapshots).
    #[arg(long, global = true, help_heading = GLOBAL, value_name = "DIR", env = "CLINV_SNAPSHOTS")]
    pub snapshots: Option<PathBuf>,

    /// Print only data and errors.
    #[arg(short, long, global = true, help_heading = GLOBAL, conflicts_with = "verbose")]
    pub quiet: bool,

    /// Also say how a read command got its answer, and debug lines (also a non-empty DEBUG).
    #[arg(short, long, global = true, help_heading = GLOBAL, action = clap::ArgAction::Count)]
    pub verbose: u8,

    /// Colour the [warn]/[error] tags and reports (diff): auto (terminal and no NO_COLOR), always, never.
    #[arg(long, global = true, help_heading = GLOBAL, value_name = "WHEN", default_value = "auto")]
    pub color: ColorChoice,

    /// Treat every warning as an error.
    #[arg(long, global = true, help_heading = GLOBAL)]
    pub strict: bool,
}

impl Formats for TableFormat {
    fn possible_values() -> Vec<PossibleValue> {
        let mut values: Vec<PossibleValue> = Self::PLAIN
            .iter()
            .map(|(name, _)| PossibleValue::new(*name))
            .collect();
        values.push(PossibleValue::new("jsonpath=TEMPLATE"));
        values
    }

    fn parse_format(text: &str) -> Result<Option<TableFormat>, String> {
        if let Some((_, format)) = Self::PLAIN.iter().find(|(name, _)| *name == text) {
            return Ok(Some(format.clone()));
        }
        match text.split_once('=') {
            _ if text == "jsonpath" || text == "jsonpath=" => {
                Err("jsonpath needs a template: -o jsonpath='{...}'".to_string())
            }
            Some(("jsonpath", template)) => Template::parse(template)
                .map(|t| Some(TableFormat::JsonPath(t)))
                .map_err(|e| format!("invalid jsonpath template '{template}': {e}")),
            _ => Ok(None),
        }
    }
}

/// `clinv fleet --from`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum FleetFrom {
    /// Each cluster domain's inventory as the project renders it now (desired)
    #[default]
    Project,
    /// Each domain's newest snapshot in the store (recorded)
    Store,
    /// Each cluster domain's live inventory, each through its own kubeconfig (as
    /// replay --all); cells not what the project renders are drifting
    Live,
}

#[derive(Debug, Args)]
pub struct FleetArgs {
    /// Only these domains: a name or a glob ('air-*', ?), repeatable; `--from live` reads only
    /// these clusters. With --against, the first side of the comparison (default: every domain not in --against).
    #[arg(long, value_name = "D")]
    pub domain: Vec<String>,

    /// Every domain (the default), as kubectl's -A.
    #[arg(short = 'A', long, conflicts_with = "domain")]
    pub all_domains: bool,

    /// Compare with these domains (a name or a glob, repeatable): a row per addon whose
    /// versions differ between the two sides, each side's versions with the domains
    /// running them; addons alike are counted on stderr. Exit 0 same, 1 different, 2 an
    /// error (as diff).
    #[arg(long, value_name = "D",
          conflicts_with_all = ["below", "above", "behind_index", "differs", "by"])]
    pub against: Vec<String>,

    /// Where the versions come from. Default: project; outside any project, the store
    /// --snapshots or CLINV_SNAPSHOTS names.
    #[arg(long, value_name = "SOURCE")]
    pub from: Option<FleetFrom>,

    /// Read the committed inventory of every domain folder (clusters/<domain>/inventory/)
    /// of this GitOps repository instead: the shared record of a team.
    #[arg(long, value_name = "DIR", conflicts_with = "from")]
    pub repo: Option<PathBuf>,

    /// Branch or revision of --repo (default HEAD).
    #[arg(long, value_name = "REV", requires = "repo")]
    pub branch: Option<String>,

    /// Only this addon.
    #[arg(long, value_name = "NAME")]
    pub addon: Option<String>,

    /// Only versions below V (SemVer with or without v; 1.20 means 1.20.0). A version
    /// that is not SemVer cannot be ordered: it is left out, and said.
    #[arg(long, value_name = "V")]
    pub below: Option<String>,

    /// Only versions above V (as --below).
    #[arg(long, value_name = "V")]
    pub above: Option<String>,

    /// Only versions older than this addon index's (a file, or an https:// URL, cached):
    /// what is behind.
    #[arg(long, value_name = "FILE|URL")]
    pub behind_index: Option<String>,

    #[command(flatten)]
    pub source: IndexSourceArgs,

    /// Only the cells that differ from their addon's majority version across domains.
    #[arg(long)]
    pub differs: bool,

    /// The matrix as it was at DATE: each domain's newest snapshot at or before it
    /// (as diff's @DATE: YYYY-MM-DD is that whole day, UTC; an RFC 3339 time; today,
    /// yesterday; a time ago, 2d), or with --repo the branch's newest commit at or before
    /// it. Reads the store unless --repo is given; --from project and live have no past.
    #[arg(long, value_name = "DATE")]
    pub at: Option<String>,

    /// Mark the cells that changed since DATE (as --at): `(was V)` after a version that
    /// was another then, `(new)` where the domain did not have the addon then.
    #[arg(long, value_name = "DATE")]
    pub changed_since: Option<String>,

    /// Only the cells that changed since --changed-since's date.
    #[arg(long, requires = "changed_since")]
    pub changed_only: bool,

    /// Rows per addon (default) or per domain.
    #[arg(long, value_name = "ROWS", default_value = "addon")]
    pub by: FleetBy,

    /// Only the rows: no header.
    #[arg(long)]
    pub no_headers: bool,

    /// Output format (default: table).
    #[arg(short = 'o', long = "output", value_name = "FORMAT",
          value_parser = FormatParser::<FleetFormat>::new())]
    pub output: Option<FleetFormat>,

    /// `--from live`: the one --timeout of the command and each cluster's probe budget.
    #[command(flatten)]
    pub limits: ClusterArgs,
}

impl FleetArgs {
    /// The selection, for [`crate::fleet::select_in`].
    pub fn many(&self) -> crate::project::select::Many<'_> {
        crate::project::select::Many {
            patterns: &self.domain,
            all: self.all_domains,
        }
    }
}

/// One command's `-o` values: the names help lists and how a value is read. A plain
/// [`ValueEnum`] is one; [`TableFormat`] adds `jsonpath=TEMPLATE`.
pub trait Formats: Sized + Clone + Send + Sync + 'static {
    /// The formats, in the order help and errors list them.
    fn possible_values() -> Vec<PossibleValue>;
    /// `text` as one of the formats: `Ok(None)` when it is none of them, an error when
    /// it names one with an unusable argument (a template that does not parse).
    ///
    /// # Errors
    /// What is wrong with the argument.
    fn parse_format(text: &str) -> Result<Option<Self>, String>;
}

impl<E: ValueEnum + Clone + Send + Sync + 'static> Formats for E {
    fn possible_values() -> Vec<PossibleValue> {
        E::value_variants()
            .iter()
            .filter_map(ValueEnum::to_possible_value)
            .collect()
    }

    fn parse_format(text: &str) -> Result<Option<E>, String> {
        Ok(E::value_variants()
            .iter()
            .find(|v| {
                v.to_possible_value()
                    .is_some_and(|p| p.matches(text, false))
            })
            .cloned())
    }
}

/// Parses one command's `-o` enum; a value it does not list is a usage error that names
/// the command and its formats (kept in the error's `Custom` context for
/// [`unsupported_format`]).
#[derive(Debug, Clone, Copy)]
pub struct FormatParser<E> {
    formats: PhantomData<E>,
}

impl<E> FormatParser<E> {
    pub const fn new() -> FormatParser<E> {
        FormatParser {
            formats: PhantomData,
        }
    }
}

impl<E> Default for FormatParser<E> {
    fn default() -> Self {
        FormatParser::new()
    }
}

impl<E: Formats> TypedValueParser for FormatParser<E> {
    type Value = E;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<E, clap::Error> {
        let text = value.to_string_lossy();
        // `clinv snapshots list`, as the user typed the command.
        let bin = cmd.get_bin_name().unwrap_or_else(|| cmd.get_name());
        let command = bin.strip_prefix("clinv ").unwrap_or(bin);
        let names: Vec<String> = E::possible_values()
            .iter()
            .map(|p| p.get_name().to_string())
            .collect();
        let message = match E::parse_format(&text) {
            Ok(Some(found)) => return Ok(found),
            Ok(None) => format!(
                "clinv {command}: unsupported output format '{text}' (supported: {})",
                names.join(", ")
            ),
            Err(why) => format!("clinv {command}: {why}"),
        };
        let mut err = clap::Error::new(ErrorKind::InvalidValue).with_cmd(cmd);
        let arg = arg.map_or_else(|| "--output".to_string(), ToString::to_string);
        err.insert(ContextKind::InvalidArg, ContextValue::String(arg));
        err.insert(
            ContextKind::InvalidValue,
            ContextValue::String(text.to_string()),
        );
        err.insert(ContextKind::ValidValue, ContextValue::Strings(names));
        err.insert(ContextKind::Custom, ContextValue::String(message));
        Err(err)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(E::possible_values().into_iter()))
    }
}

/// The message of an unsupported `-o` value, when that is what `err` is.
pub fn unsupported_format(err: &clap::Error) -> Option<&str> {
    match err.get(ContextKind::Custom) {
        Some(ContextValue::String(message)) => Some(message),
        _ => None,
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Render the ClusterInventory of a domain (stdout, or two files with --out).
    ///
    /// Formats: yaml (default), json (lok8s's pretty JSON plus a newline). The object is
    /// checked against the CRD first; a render that the API server would reject fails.
    #[command(after_help = examples::RENDER)]
    Render(RenderArgs),

    /// Print the ClusterInventory CRD (formats: yaml, json).
    #[command(after_help = examples::CRD)]
    Crd(CrdArgs),

    /// List the addons a domain deploys with what `render` records of each: source,
    /// category, version (formats: table, wide, name, json, yaml, jsonpath).
    ///
    /// lok8s's `lo addons --detail` layout; -o wide adds each entry's directory and where
    /// it is configured.
    #[command(after_help = examples::ADDONS)]
    Addons(AddonsArgs),

    /// Render the inventory and server-side apply the CRD and the CR (field manager lok8s).
    ///
    /// Fail-soft like lok8s: an unreachable cluster, a missing kubeconfig, missing RBAC,
    /// a conflicting CRD or a render failure print a [warn] and exit 0. With --strict they
    /// exit with the code of their reason (see the README).
    #[command(after_help = examples::PUBLISH)]
    Publish(PublishArgs),

    /// Show the `lo status` inventory block read from the live cluster, with the domain's
    /// delivery: source, ages, last apply, queue (formats: text, json: schemaVersion 2,
    /// prometheus).
    ///
    /// When the cluster cannot be read, the snapshot of the domain applied last is shown
    /// instead (never a pending one, which never reached the cluster), and the output says
    /// so ("from snapshot ID"). Ages are kubectl's (3h, 2d5h);
    /// JSON has the absolute RFC 3339 times. Several domains (-A, --domain repeated, a
    /// glob): a row each; exit 1 if a domain could not be answered (its spec does not
    /// parse: the row names file, line and column), else 16 if any cluster was not read.
    #[command(after_help = examples::STATUS)]
    Status(ReadArgs<StatusOutput>),

    /// Deliver pending snapshots: apply the newest one per domain, supersede the rest.
    ///
    /// A live inventory rendered later than the snapshot, or another domain's (its
    /// lok8s.dev/domain label), is never overwritten. Fail-soft like publish; re-running
    /// after a crash converges without a second apply. Then the owed Git and registry
    /// pushes of the same domains (a commit --push or push oci:// whose far end did not
    /// answer) are delivered, each within --timeout; one the far end refuses stays owed
    /// and exits 1. --watch keeps running and delivers each as soon as it can.
    #[command(after_help = examples::REPLAY)]
    Replay(ReplayArgs),

    /// Commit the inventory into a GitOps repository (Flux / Argo CD) with git2.
    ///
    /// Renders the project as it is now and records it in the snapshot store first (for
    /// Git only; the store's newest snapshot when that holds the same inventory), or with
    /// --snapshot takes a stored one; says which. Writes <path>/clusterinventory.crd.yaml,
    /// clusterinventory.yaml and kustomization.yaml (default path
    /// clusters/<domain>/inventory) and commits them on the branch, unless the branch
    /// already holds the same inventory ("up to date") or a newer one.
    ///
    /// Several domains (-A, --domain repeated, a glob) go in one commit — one pull request
    /// for a fleet-wide pin bump — with a subject and body summarising each domain's
    /// change and a table of what happened to each; nothing is committed when one domain
    /// cannot be rendered or recorded.
    #[cfg(feature = "gitops")]
    #[command(after_help = examples::COMMIT)]
    Commit(CommitArgs),

    /// Push the inventory to an OCI registry as the artifact Flux (and Argo CD) sync.
    ///
    /// Packs the folder `commit` writes (CRD, ClusterInventory, kustomization) the way
    /// `flux push artifact` does, reproducibly: identical content gives an identical
    /// digest, and a re-push uploads nothing. The snapshot is chosen as `commit` chooses
    /// it. Tags: the given one (default latest) and snapshot-<id>. Prints the pushed
    /// reference with its digest.
    #[cfg(feature = "gitops")]
    #[command(after_help = examples::PUSH)]
    Push(PushArgs),

    /// Inspect and maintain the local snapshot store (default: list).
    #[command(after_help = examples::SNAPSHOTS)]
    Snapshots(SnapshotsArgs),

    /// Print the project's machine-readable addon index (lok8s's addons-index.json).
    ///
    /// One entry per non-hidden directory in .lok8s/addons (symlinks to directories
    /// count), sorted by name, with chartVersion, category and appVersion when known.
    /// generatedAt is SOURCE_DATE_EPOCH, else the committer time of the last git commit
    /// touching .lok8s/addons, else now — so one commit always gives the same bytes.
    #[command(after_help = examples::INDEX)]
    Index(IndexArgs),

    /// List the addons that have a newer version in the addon index (formats: table, wide,
    /// name, json, yaml, jsonpath).
    ///
    /// Compares the live inventory when the cluster is reachable, else the newest
    /// snapshot, else the locally rendered one (or --from FILE), against --index FILE|URL. SemVer with or without a
    /// leading v, pre-releases below their release and offered only with --pre or after
    /// a pre-release (marked "pre-release"); versions that are not SemVer are listed only
    /// when they differ, marked "unordered". A name repeated in the index is a warning
    /// (the first entry counts).
    #[command(after_help = examples::UPDATES)]
    Updates(UpdatesArgs),

    /// Run the in-cluster status writer: availableUpdates, observedAddons, lastReported.
    ///
    /// Reads the live ClusterInventory, compares it with --index, reads Helm release
    /// records when RBAC allows, and merge-patches the status subresource (field manager
    /// clinv-agent; spec is never sent). Loops every --interval (with jitter, backing off
    /// on errors) until stopped; --once does one pass. A missing CRD or object, or missing
    /// RBAC, is one log line and no write; with --once --strict it is an exit code.
    #[command(after_help = examples::AGENT)]
    Agent(AgentArgs),

    /// Compare two inventories semantically: addons added, removed, upgraded, downgraded,
    /// changed; Kubernetes version and the other spec fields.
    ///
    /// A and B are each a file (a rendered CR in YAML or JSON, a `kubectl get -o yaml|json`
    /// dump, or a `render --out` directory), `-` for stdin, `cluster` for the live
    /// object, a snapshot of the store, or (with --repo) a committed version. Formats:
    /// text (default), json, markdown, unified. renderedAt and server-owned metadata
    /// never count as a change. --domain names the domain of snapshot references, of the
    /// default git: path, and whose kubeconfig `cluster` uses (.kubeconfig/<name>.yaml).
    ///
    /// Several domains (-A, --domain repeated, a glob): A and B are read for each domain
    /// (its snapshots, its git: folder, its cluster), one section each (text under
    /// `== DOMAIN ==`; -o json a list of reports); deploy domains are named and skipped.
    ///
    /// Exit codes (the diff/kubectl convention): 0 same, 1 different (any domain), 2 any
    /// error (any domain, once the others are shown).
    #[command(after_help = IGNORE_HELP)]
    Diff(DiffArgs),

    /// The addon × domain matrix: which version of each addon every domain runs — as the
    /// project renders it (default) or as each domain's newest snapshot recorded it
    /// (formats: table, json, yaml, markdown, html).
    ///
    /// Deploy domains have no column and are named on stderr (and in -o json). Exit 0,
    /// also when a query matches nothing (then no rows, and a line that says so); 1 when
    /// a domain could not be read (its spec does not parse, its snapshot is damaged: an
    /// [error] naming it, the others printed); 16 when --from live did not read a cluster.
    /// An --addon no domain has is a warning with the closest name (--strict: exit 2).
    /// With --against (what differs between two selections), exit as diff: 0 the same, 1
    /// different, 2 any error (16: --from live did not read a cluster of a side).
    #[command(after_help = examples::FLEET)]
    Fleet(FleetArgs),

    /// The history of a domain, newest first: time, outcome (applied, pending, committed,
    /// superseded) and what changed (formats: text, json, markdown).
    ///
    /// From the snapshot store, or from a GitOps repository's commits with --repo.
    /// --addon NAME shows when each version of that addon arrived and left.
    #[command(after_help = examples::LOG)]
    Log(LogArgs),

    /// Write one self-contained HTML page: the current inventory, a timeline of
    /// Kubernetes and addon versions, and the change list.
    #[command(after_help = examples::REPORT)]
    Report(ReportArgs),

    /// Compare the project's render with the live inventory, semantically like `clinv
    /// diff`: a pin bump is drift.
    ///
    /// When the cluster cannot be read the answer is unknown and says why; --offline
    /// compares with the snapshot applied last instead (never a pending one).
    /// Exit codes: 0 in sync, 1 drift, 2 unknown (nothing to compare with) or an error.
    /// Several domains (-A, --domain repeated, a glob): 2 if any comparison failed, else
    /// 16 if any cluster was not read, else 1 if any drifted, else 0.
    #[command(after_help = examples::DRIFT)]
    Drift(ReadArgs<DriftOutput>),

    /// Print the shell's completion script: on each TAB it asks clinv for the candidates
    /// (commands, flags, each command's -o formats, domains, snapshot ids and references).
    ///
    /// The same script as `COMPLETE=SHELL clinv`. Load it at shell start-up, so that it
    /// always matches the installed clinv: bash `source <(clinv completions bash)` in
    /// ~/.bashrc, zsh `source <(clinv completions zsh)` in ~/.zshrc, fish `clinv
    /// completions fish | source` in ~/.config/fish/config.fish. --static prints the
    /// older self-contained script instead (no domains or snapshot ids).
    #[command(after_help = examples::COMPLETIONS)]
    Completions {
        /// The shell to generate for.
        shell: clap_complete::Shell,

        /// A self-contained script that never calls clinv: commands, flags and formats
        /// only.
        #[arg(long = "static")]
        static_script: bool,
    },

    /// Print clinv's version, its git commit (when known at build time), the lok8s schema
    /// (apiVersion) it renders and the Kubernetes API version of its types.
    ///
    /// Formats: text (default), json. The commit is `CLINV_GIT_COMMIT` at build time
    /// (`CLINV_GIT_COMMIT=$(git rev-parse HEAD) cargo build`), else unknown.
    #[command(after_help = examples::VERSION)]
    Version(TextOutput),
}

/// `-o text|wide|json` of `clinv drift`.
#[derive(Debug, Clone, Default, Args)]
pub struct DriftOutput {
    /// Output format (default: text).
    #[arg(short = 'o', long = "output", value_name = "FORMAT",
          value_parser = FormatParser::<DriftFormat>::new())]
    pub output: Option<DriftFormat>,
}

/// `-o text|json` of a command that prints one document.
#[derive(Debug, Clone, Default, Args)]
pub struct TextOutput {
    /// Output format (default: text).
    #[arg(short = 'o', long = "output", value_name = "FORMAT",
          value_parser = FormatParser::<TextFormat>::new())]
    pub output: Option<TextFormat>,
}

/// `-o table|json|yaml`: the closing table of a command over several domains.
#[derive(Debug, Clone, Default, Args)]
pub struct ResultsOutput {
    /// With several domains, the format of the closing table: table (default), wide,
    /// json or yaml (a list of {domain, result, detail}).
    #[arg(short = 'o', long = "output", value_name = "FORMAT",
          value_parser = FormatParser::<ResultsFormat>::new())]
    pub output: Option<ResultsFormat>,
}

const IGNORE_HELP: &str = "\
References (A and B):
  FILE | DIR | - | cluster    a file, a render --out directory, stdin, the live object
  latest, latest~N            the newest snapshot of the domain, or the N-th before it
  ID                          a snapshot id or a unique prefix of one (snapshots list)
  @DATE                       the snapshot current at DATE: YYYY-MM-DD, RFC 3339, yesterday,
                              a time ago (1w, '2 hours ago')
  git:REV[:PATH]              the inventory committed at REV in --repo
  oci://REG/REPO[:TAG][@DIGEST]  the artifact `clinv push` left in a registry (--verify KEY
                              checks its cosign signature first)
Snapshot references read --snapshots (default <root>/snapshots; no project needed) in the
domain chosen by --domain, DOMAIN_NAME, clusters/.active, or the store's only domain.

--ignore PATH ignores every change at or below PATH; ignored changes are listed apart and
never change the exit code. PATH is one of:
  spec.FIELD                  lok8sVersion, kind, specHash, provider, kubernetesVersion
  spec.addons[SEL]            an addon: its addition, removal and every field change
  spec.addons[SEL].FIELD      chartVersion, appVersion, category, source
  metadata.labels[KEY]        e.g. metadata.labels[lok8s.dev/domain]
  apiVersion, spec, spec.addons, metadata
SEL is a name (every occurrence), NAME#N (the N-th occurrence), * or *#N.

Examples:
  # What changed between the two newest snapshots
  clinv diff latest~1 latest
  # The project as it renders now against the live object
  clinv render | clinv diff - cluster --ignore 'spec.addons[cilium]'
  # What ran on March 1st against what runs now
  clinv diff @2026-03-01 latest -o markdown";

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The older inventory: FILE, DIR (from render --out), - (stdin), cluster, latest~N,
    /// a snapshot ID, @DATE, git:REV[:PATH] or oci://… (see below).
    #[arg(value_name = "A")]
    pub from: String,

    /// The newer inventory, same forms as A.
    #[arg(value_name = "B")]
    pub to: String,

    /// Ignore changes at or below PATH (repeatable), e.g. spec.specHash, spec.addons[*].category.
    #[arg(long, value_name = "PATH")]
    pub ignore: Vec<String>,

    // The domain of snapshot references, of the default git: path, and whose kubeconfig
    // `cluster` uses; several domains compare A and B of each.
    #[command(flatten)]
    pub domain: DomainsArgs,

    #[command(flatten)]
    pub limits: ClusterArgs,

    #[command(flatten)]
    pub registry: RegistryArgs,

    /// oci:// references: refuse unless the artifact carries a valid cosign signature by
    /// this public key (PEM).
    #[arg(long, value_name = "KEY")]
    pub verify: Option<PathBuf>,

    /// GitOps repository for `git:REV[:PATH]` references.
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,

    /// Brief text: one line per changed addon and a summary (`-o json` has the counts
    /// in `summary`).
    #[arg(long, conflicts_with = "output")]
    pub stat: bool,

    /// Output format (default: text).
    #[arg(short = 'o', long = "output", value_name = "FORMAT",
          value_parser = FormatParser::<DiffFormat>::new())]
    pub output: Option<DiffFormat>,
}

#[derive(Debug, Args)]
pub struct DomainArgs {
    /// Cluster domain (default: DOMAIN_NAME, then clusters/.active, then lok8s.dev).
    #[arg(long, value_name = "D")]
    pub domain: Option<String>,
}

/// The domains of a command that also covers several: one `--domain` as [`DomainArgs`],
/// or a fleet — `-A`, `--domain` repeated, or a glob
/// ([`crate::project::select::Many`]).
#[derive(Debug, Args)]
pub struct DomainsArgs {
    /// Cluster domain (default: DOMAIN_NAME, then clusters/.active, then lok8s.dev).
    /// Repeat it, or give a glob ('prod-*', ?), for several domains.
    #[arg(long, value_name = "D")]
    pub domain: Vec<String>,

    /// Every domain of the project (log: of the store), as kubectl's -A. With several
    /// domains (also a glob matching one), each row and -o json entry names its domain,
    /// and the exit code is the worst domain's (publish: the highest code).
    #[arg(short = 'A', long, conflicts_with = "domain")]
    pub all_domains: bool,
}

impl DomainsArgs {
    /// The selection, for [`crate::project::select::resolve`].
    pub fn many(&self) -> crate::project::select::Many<'_> {
        crate::project::select::Many {
            patterns: &self.domain,
            all: self.all_domains,
        }
    }

    /// The one `--domain` of a selection that is not a fleet.
    pub fn one(&self) -> Option<&str> {
        self.domain.first().map(String::as_str)
    }
}

#[derive(Debug, Args)]
pub struct RenderArgs {
    #[command(flatten)]
    pub domain: DomainsArgs,

    /// Write DIR/clusterinventory.crd.yaml and DIR/clusterinventory.yaml atomically;
    /// with several domains DIR/<domain>/ each (all rendered before any is written).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Output format (default: yaml; --out always writes YAML).
    #[arg(short = 'o', long = "output", value_name = "FORMAT",
          value_parser = FormatParser::<DocFormat>::new())]
    pub output: Option<DocFormat>,
}

#[derive(Debug, Args)]
pub struct CrdArgs {
    /// Output format (default: yaml).
    #[arg(short = 'o', long = "output", value_name = "FORMAT",
          value_parser = FormatParser::<DocFormat>::new())]
    pub output: Option<DocFormat>,
}

/// `-o` and `--no-headers` of a command that prints a table.
#[derive(Debug, Clone, Args)]
pub struct TableOutput {
    /// Output format (default: table; wide adds the command's extra columns; name prints
    /// one name per line; jsonpath=TEMPLATE applies kubectl's JSONPath template to the
    /// -o json document).
    #[arg(short = 'o', long = "output", value_name = "FORMAT",
          value_parser = FormatParser::<TableFormat>::new())]
    pub output: Option<TableFormat>,

    /// Only the rows: no title, header or closing hint (table and wide; name, json and
    /// jsonpath have none).
    #[arg(long)]
    pub no_headers: bool,

    /// With -o jsonpath: a field or index the document lacks prints nothing (kubectl's
    /// default); false makes it an error naming the field.
    #[arg(long, value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set)]
    pub allow_missing_template_keys: bool,
}

impl TableOutput {
    /// A table command's answer in the `-o` asked for.
    ///
    /// Its document (`json`, as YAML, or a jsonpath over it), its `names` one a line, or its
    /// `table` in the style asked for (`width`: the terminal's, or `None` for a table with no
    /// free text to fit).
    pub fn answer(
        &self,
        width: Option<usize>,
        json: impl Fn() -> crate::error::Result<String>,
        names: impl FnOnce() -> String,
        table: impl FnOnce(crate::view::TableStyle) -> String,
    ) -> crate::error::Result<String> {
        self.plain().answer(width, json, names, table)
    }

    /// The flags as the views take them.
    pub fn plain(&self) -> crate::view::format::TableAsk {
        crate::view::format::TableAsk {
            output: self.output.clone(),
            no_headers: self.no_headers,
            allow_missing_template_keys: self.allow_missing_template_keys,
        }
    }
}

impl Default for TableOutput {
    fn default() -> Self {
        TableOutput {
            output: None,
            no_headers: false,
            allow_missing_template_keys: true,
        }
    }
}

#[derive(Debug, Args)]
pub struct AddonsArgs {
    #[command(flatten)]
    pub domain: DomainsArgs,

    #[command(flatten)]
    pub table: TableOutput,
}

/// How commands that talk to a cluster reach it, and their limits. Only those commands
/// take them: the others refuse `--kubeconfig` rather than ignore it.
#[derive(Debug, Args)]
pub struct ClusterArgs {
    /// Kubeconfig file (default: KUBECONFIG, else ~/.kube/config).
    #[arg(long, value_name = "FILE", help_heading = CLUSTER)]
    pub kubeconfig: Option<PathBuf>,

    /// Kubeconfig context to use (default: its current-context).
    #[arg(long, value_name = "NAME", help_heading = CLUSTER)]
    pub context: Option<String>,

    /// Deadline for the whole operation, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 30.0, value_parser = parse_secs, help_heading = CLUSTER)]
    pub timeout: f64,

    /// Budget for reaching the API server (connect and the first request), in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 3.0, value_parser = parse_secs, help_heading = CLUSTER)]
    pub probe_timeout: f64,
}

#[derive(Debug, Args)]
pub struct PublishArgs {
    #[command(flatten)]
    pub domain: DomainsArgs,

    #[command(flatten)]
    pub limits: ClusterArgs,

    /// Take over fields owned by another field manager.
    #[arg(long)]
    pub force_conflicts: bool,

    /// Apply over a live ClusterInventory that belongs to another domain (its
    /// lok8s.dev/domain label) or carries no domain label. Without it that object is left
    /// as it is, the snapshot stays pending (domain-mismatch) and the exit code is 12:
    /// two domains whose kubeconfigs reach one cluster is a mistake to fix, not a race.
    #[arg(long)]
    pub take_over: bool,

    /// Server-side dry run: print what would change, persist nothing.
    #[arg(long)]
    pub dry_run: bool,

    #[command(flatten)]
    pub results: ResultsOutput,
}

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// Cluster domain (default: DOMAIN_NAME, then clusters/.active, then lok8s.dev).
    /// Repeat it, or give a glob ('prod-*', ?), for several of the store's domains.
    #[arg(long, value_name = "D")]
    pub domain: Vec<String>,

    /// Replay every domain that has snapshots in the store, each to its own cluster (as
    /// publish --domain D chooses it), in parallel, all within one --timeout; a table of
    /// the outcomes ends the run (so it does for several --domain). `-A`/`--all-domains`
    /// as kubectl's `-A`.
    #[arg(
        short = 'A',
        long,
        visible_alias = "all-domains",
        conflicts_with = "domain"
    )]
    pub all: bool,

    #[command(flatten)]
    pub results: ResultsOutput,

    #[command(flatten)]
    pub limits: ClusterArgs,

    /// Take over fields owned by another field manager.
    #[arg(long)]
    pub force_conflicts: bool,

    /// Apply over a live ClusterInventory that belongs to another domain (its
    /// lok8s.dev/domain label) or carries no domain label. Without it that object is left
    /// as it is, the snapshot stays pending (domain-mismatch) and the exit code is 12:
    /// two domains whose kubeconfigs reach one cluster is a mistake to fix, not a race.
    #[arg(long)]
    pub take_over: bool,

    /// Say what would be applied and superseded; change nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// Apply the snapshot even over a live inventory rendered later (a clock or a fixed
    /// SOURCE_DATE_EPOCH that disagrees; clinv warns when it sees the skew).
    #[arg(long)]
    pub allow_older: bool,

    /// Deliver through each domain's kubeconfig as it is now (publish's rules:
    /// .kubeconfig/<name>.yaml in the project, else KUBECONFIG, else ~/.kube/config, and
    /// its current context) instead of the kubeconfig and context recorded with the
    /// snapshot: after the kubeconfigs were regenerated, moved or renamed their contexts.
    /// The domain guard still holds (another domain's inventory is left alone without
    /// --take-over).
    #[arg(long)]
    pub retarget: bool,

    #[command(flatten)]
    pub watch: WatchArgs,
}

/// `replay --watch`: the delivery loop's own flags.
#[derive(Debug, Args)]
#[command(next_help_heading = "Delivery loop")]
pub struct WatchArgs {
    /// Keep running: deliver what is owed (pending snapshots, owed pushes) as soon as each
    /// far end answers, also what other clinv processes record while it runs (seen within
    /// a quarter of a second). Each domain not answering waits out its own backoff. SIGTERM/SIGINT end it (exit 0 within
    /// 5 s); SIGHUP reads the project's kubeconfigs again. One loop per store (a second
    /// one exits 18 naming the first's pid). See docs/guide/delivering.md.
    #[arg(long, conflicts_with_all = ["dry_run", "output"])]
    pub watch: bool,

    /// The first wait after a domain's failed attempt; it doubles per failure (±20 %
    /// jitter) up to --backoff-cap. Go duration syntax.
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = parse_interval, requires = "watch")]
    pub backoff_base: std::time::Duration,

    /// The longest wait between two attempts of one domain.
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = parse_interval, requires = "watch")]
    pub backoff_cap: std::time::Duration,

    /// The longest wait between two probes of a cluster that answers nothing at all
    /// (one TCP connect each): a link that returns is found within this, however long
    /// it was dark. Attempts that reached the cluster and failed keep --backoff-cap.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_interval, requires = "watch")]
    pub probe_interval: std::time::Duration,

    /// How often every selected domain's queue and the outbox are read in full, as a
    /// controller resyncs: a change another process recorded but whose hint was lost
    /// (a `.changes` it could not append to, one truncated by logrotate) is seen within
    /// this. SIGHUP reads them in full at once.
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = parse_interval, requires = "watch")]
    pub resync_period: std::time::Duration,

    /// Deliveries in flight at once, each bounded by --timeout.
    #[arg(long, value_name = "N", default_value_t = 16, value_parser = clap::value_parser!(u16).range(1..=1024), requires = "watch")]
    pub parallel: u16,

    /// Serve Prometheus metrics on http://HOST:PORT/metrics, with /healthz and /readyz
    /// (e.g. 127.0.0.1:9464, or 0.0.0.0:9464 in a pod). No authentication: bind it to
    /// loopback or a private interface.
    #[arg(long, value_name = "HOST:PORT", requires = "watch")]
    pub metrics_addr: Option<String>,

    /// One line per event on stderr: text, or json (one object per line).
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = EventFormat::Text, requires = "watch")]
    pub log_format: EventFormat,
}

#[derive(Debug, Args)]
pub struct LogArgs {
    /// Several domains (-A: every domain of the store; --domain repeated, a glob): their
    /// changes merged newest first, each line naming its domain (with --since/--until,
    /// --max-count, --oneline, -o json).
    #[command(flatten)]
    pub domain: DomainsArgs,

    /// Only entries at or after T: YYYY-MM-DD, RFC 3339, today, yesterday, or a time
    /// ago (30m, 12h, 2d, 1w, or git's "2 hours ago").
    #[arg(long, value_name = "T")]
    pub since: Option<String>,

    /// Only entries at or before T, same forms (a bare date or yesterday includes that day).
    #[arg(long, value_name = "T")]
    pub until: Option<String>,

    /// At most N entries (the newest).
    #[arg(long = "max-count", value_name = "N")]
    pub max_count: Option<usize>,

    /// `-n` is refused with a hint: it is neither git's --max-count nor kubectl's
    /// namespace here (see --max-count and --domain).
    #[arg(short = 'n', value_name = "X", hide = true, allow_hyphen_values = true)]
    pub n: Option<String>,

    /// One line per entry: what changed, then time, outcome and revision, aligned.
    #[arg(long, conflicts_with = "output")]
    pub oneline: bool,

    /// Oldest first (after --max-count took the newest).
    #[arg(long)]
    pub reverse: bool,

    /// When each version of this addon arrived and left; with several domains (-A, a
    /// glob), every step of theirs that changes it, merged, a line each naming its domain.
    #[arg(long, value_name = "NAME")]
    pub addon: Option<String>,

    /// Read the history from this GitOps repository's commits instead of the store.
    #[arg(long, value_name = "DIR", conflicts_with = "all_domains")]
    pub repo: Option<PathBuf>,

    /// Branch or revision of --repo (default HEAD).
    #[arg(long, value_name = "REV", requires = "repo")]
    pub branch: Option<String>,

    /// Read the history from the artifacts `clinv push` left in this OCI repository
    /// (oci://REGISTRY/REPOSITORY) instead of the store.
    #[arg(long, value_name = "OCI_URL", conflicts_with_all = ["repo", "all_domains"])]
    pub oci: Option<String>,

    /// --oci: refuse (exit 17) unless every artifact carries a valid cosign signature by
    /// this public key (PEM).
    #[arg(long, value_name = "KEY", requires = "oci")]
    pub verify: Option<PathBuf>,

    #[command(flatten)]
    pub registry: RegistryArgs,

    /// Output format (default: text).
    #[arg(short = 'o', long = "output", value_name = "FORMAT",
          value_parser = FormatParser::<LogFormat>::new())]
    pub output: Option<LogFormat>,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Several domains (-A: every domain of the store; --domain repeated, a glob): the
    /// fleet report — the matrix and the timeline of grouped events.
    #[command(flatten)]
    pub domain: DomainsArgs,

    /// The fleet report: the matrix as it was at DATE (as fleet --at) and the timeline up
    /// to it. Default: the newest.
    #[arg(long, value_name = "DATE")]
    pub at: Option<String>,

    /// The fleet report: only the events at or after T (as log --since).
    #[arg(long, value_name = "T")]
    pub since: Option<String>,

    /// Output format (default: html; json is the audit trail of `log -o json`, with several
    /// domains the fleet report's matrix and timeline).
    #[arg(short = 'o', long = "output", value_name = "FORMAT",
          value_parser = FormatParser::<ReportFormat>::new())]
    pub output: Option<ReportFormat>,

    /// Write the page here (atomically) instead of stdout.
    #[arg(long, value_name = "FILE.html")]
    pub out: Option<PathBuf>,

    /// Read the history from this GitOps repository's commits instead of the store.
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,
}

/// `clinv push --layer-media-type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum LayerMediaType {
    /// application/vnd.cncf.flux.content.v1.tar+gzip, as `flux push artifact` writes
    #[default]
    Flux,
    /// application/vnd.oci.image.layer.v1.tar+gzip: what a default Argo CD accepts (Flux
    /// takes it too)
    Oci,
}

#[derive(Debug, Args)]
pub struct PushArgs {
    /// Where to push: oci://REGISTRY[:PORT]/REPOSITORY[:TAG] (tag default latest).
    /// With several domains (-A, --domain repeated, a glob) it holds {domain}, each
    /// domain's own artifact: oci://registry/inventory/{domain}:latest.
    #[arg(value_name = "OCI_URL")]
    pub target: String,

    #[command(flatten)]
    pub domain: DomainsArgs,

    /// Push this snapshot of the store (latest, latest~N, an id) instead of rendering the
    /// project.
    #[arg(long, value_name = "ID")]
    pub snapshot: Option<String>,

    /// org.opencontainers.image.source (default: the project checkout's origin URL).
    #[arg(long, value_name = "URL")]
    pub source: Option<String>,

    /// Another manifest annotation (repeatable).
    #[arg(short = 'a', long = "annotation", value_name = "KEY=VALUE")]
    pub annotations: Vec<String>,

    /// The layer's media type.
    #[arg(long, value_name = "TYPE", default_value = "flux")]
    pub layer_media_type: LayerMediaType,

    #[command(flatten)]
    pub registry: RegistryArgs,

    /// Sign the pushed artifact with this ECDSA P-256 private key (PKCS#8 PEM), as
    /// cosign's key-pair signatures (tag sha256-<hex>.sig) that Flux verifies.
    #[arg(long, value_name = "KEY")]
    pub sign: Option<PathBuf>,

    /// Print the Flux OCIRepository and Kustomization that sync the artifact (and the
    /// Secrets to create on stderr) instead of pushing.
    #[arg(long, conflicts_with = "print_argo")]
    pub print_flux: bool,

    /// Print the Argo CD Application that syncs the artifact instead of pushing (use
    /// --layer-media-type oci for Argo CD).
    #[arg(long)]
    pub print_argo: bool,

    /// --print-argo: destination.server (default: the in-cluster server).
    #[arg(long, value_name = "URL", requires = "print_argo")]
    pub argo_server: Option<String>,

    #[arg(short = 'o', long, value_name = "FORMAT")]
    pub output: Option<PushFormat>,
}

/// How to reach an OCI registry (`push`, `log --oci`, `snapshots import oci://`, `diff
/// oci://…`).
#[derive(Debug, Clone, Args)]
pub struct RegistryArgs {
    /// A registry without TLS (http://) on this machine (a loopback address or
    /// localhost); elsewhere it takes --insecure.
    #[arg(long)]
    pub plain_http: bool,

    /// A registry without TLS (http://) anywhere: credentials and inventories cross the
    /// network in the clear.
    #[arg(long)]
    pub insecure: bool,

    /// Trust the CA certificates in this PEM file instead of the web roots.
    #[arg(long, value_name = "FILE")]
    pub ca_file: Option<PathBuf>,

    /// Read user:password from this environment variable (default: the Docker config's
    /// auths entry for the registry).
    #[arg(long, value_name = "NAME", conflicts_with = "token_env")]
    pub creds_env: Option<String>,

    /// Send the token in this environment variable as the registry's Bearer token, from
    /// the first request (a token its auth service issued, or a cloud registry's access
    /// token): no credentials, no exchange.
    #[arg(long, value_name = "NAME")]
    pub token_env: Option<String>,
}

#[derive(Debug, Args)]
pub struct CommitArgs {
    // Several domains (-A, --domain repeated, a glob) go in one commit, each in
    // clusters/<domain>/inventory, with a table of what happened to each.
    #[command(flatten)]
    pub domain: DomainsArgs,

    #[command(flatten)]
    pub results: ResultsOutput,

    /// The repository's worktree.
    #[arg(long, value_name = "DIR")]
    pub repo: PathBuf,

    /// Folder inside the repository (default: clusters/<domain>/inventory).
    #[arg(long, value_name = "REL")]
    pub path: Option<String>,

    /// Branch to commit on (default: the checked-out branch).
    #[arg(long, value_name = "B")]
    pub branch: Option<String>,

    /// Commit this snapshot of the store (latest, latest~N, an id) instead of rendering
    /// the project; required without a project (--snapshots alone).
    #[arg(long, value_name = "ID")]
    pub snapshot: Option<String>,

    /// Push the branch to REMOTE (default origin), rebasing on a moved remote tip.
    #[arg(long, value_name = "REMOTE", num_args = 0..=1, default_missing_value = "origin")]
    pub push: Option<String>,

    /// Give up pushing after this many seconds of retries.
    #[arg(long, value_name = "SECS", default_value_t = 60.0)]
    pub push_timeout: f64,

    /// HTTPS remotes: the token (password) is in this environment variable, sent as
    /// basic auth with the URL's user or `git` (default: git's credential helpers).
    #[arg(long, value_name = "NAME")]
    pub token_env: Option<String>,

    /// HTTPS remotes: honour http.sslVerify=false / GIT_SSL_NO_VERIFY (refused otherwise).
    #[arg(long)]
    pub allow_insecure_tls: bool,

    /// Author and committer, "Name <email>" (default: git config user.name/user.email).
    #[arg(long, value_name = "NAME <EMAIL>")]
    pub author: Option<String>,

    /// Message template: {domain} {summary} {specHash} {lok8sVersion} {snapshot}
    /// {renderedAt} {kubernetesVersion}; the Spec-Hash, Lok8s-Version and Snapshot
    /// trailers are appended when missing.
    #[arg(long, value_name = "TEMPLATE")]
    pub message: Option<String>,

    /// Sign the commit with the configured GPG or SSH signing program (`gpg.format`,
    /// `user.signingKey`); without it, git's `commit.gpgSign` decides, as for `git commit`.
    #[arg(long, overrides_with = "no_sign")]
    pub sign: bool,

    /// Do not sign the commit, whatever `commit.gpgSign` says.
    #[arg(long, overrides_with = "sign")]
    pub no_sign: bool,

    /// Commit even when the folder's files have uncommitted changes (they are overwritten).
    #[arg(long)]
    pub force: bool,

    /// Commit the snapshot even when the branch holds an inventory rendered later (a
    /// clock or a fixed SOURCE_DATE_EPOCH that disagrees).
    #[arg(long)]
    pub allow_older: bool,

    /// Print the Flux Kustomization (and GitRepository without a `flux bootstrap`) for the
    /// folder instead of committing; nothing when flux-system already applies it.
    #[arg(long, conflicts_with = "print_argo")]
    pub print_flux: bool,

    /// Print an Argo CD Application for the folder instead of committing.
    #[arg(long)]
    pub print_argo: bool,

    /// With --print-argo: an ApplicationSet over every domain folder
    /// (clusters/<domain>/inventory) on the branch, as -A; --domain repeated or a glob
    /// gives one over those domains' folders.
    #[arg(long, requires = "print_argo", conflicts_with_all = ["path", "domain"])]
    pub all: bool,

    /// Repository URL for the printed manifests (default: the push remote's, origin).
    #[arg(long, value_name = "URL")]
    pub repo_url: Option<String>,

    /// Argo CD destination server (default https://kubernetes.default.svc); with --all a
    /// template holding {domain}.
    #[arg(
        long,
        value_name = "URL",
        requires = "print_argo",
        conflicts_with = "argo_cluster_name"
    )]
    pub argo_server: Option<String>,

    /// Argo CD destination cluster name; with --all a template holding {domain} (default
    /// {domain}).
    #[arg(long, value_name = "NAME", requires = "print_argo")]
    pub argo_cluster_name: Option<String>,
}

#[derive(Debug, Args)]
pub struct SnapshotsArgs {
    /// Only this domain (default: every domain in the store). Repeat it, or give a glob
    /// ('prod-*', ?), for several.
    #[arg(long, value_name = "D", global = true)]
    pub domain: Vec<String>,

    /// Every domain of the store (what no --domain means), as kubectl's -A.
    #[arg(short = 'A', long, global = true, conflicts_with = "domain")]
    pub all_domains: bool,

    /// `clinv snapshots` alone is `clinv snapshots list`, with its flags (before any other
    /// subcommand they are a usage error).
    #[command(flatten)]
    pub list: ListArgs,

    #[command(subcommand)]
    pub command: Option<SnapshotsCommand>,
}

/// The flags of `clinv snapshots [list]`.
#[derive(Debug, Clone, Default, Args)]
pub struct ListArgs {
    /// Only snapshots in this state.
    #[arg(long, value_name = "S")]
    pub state: Option<StateArg>,

    /// Only snapshots recorded at or after T: YYYY-MM-DD, RFC 3339, today, yesterday, or
    /// a time ago (2d, 1w, "2 hours ago").
    #[arg(long, value_name = "T")]
    pub since: Option<String>,

    /// At most N snapshots of each domain, the newest (read from the newest end of the
    /// history for the table and -o name).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,

    /// Sort every row by this column, ascending (kubectl's --sort-by; default: each
    /// domain newest first).
    #[arg(long, value_name = "COLUMN")]
    pub sort_by: Option<SortKey>,

    #[command(flatten)]
    pub table: TableOutput,
}

/// `--state`: the store's states, as the command line names them (the store's type
/// knows nothing of clap).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum StateArg {
    /// Recorded, not yet applied (`queued` is the same)
    #[value(alias = "queued")]
    Pending,
    /// Applied to the cluster
    Applied,
    /// Written to a GitOps repository
    Committed,
    /// A newer snapshot of the domain was delivered first
    Superseded,
    /// Removed by `snapshots gc` (its record stays in the journal)
    Deleted,
    /// Recorded by `commit` for Git only (never for the cluster), not committed
    Recorded,
    /// Pushed to an OCI registry (`clinv push`), not committed
    Pushed,
}

impl From<StateArg> for crate::store::State {
    fn from(arg: StateArg) -> Self {
        use crate::store::State;
        match arg {
            StateArg::Pending => State::Pending,
            StateArg::Applied => State::Applied,
            StateArg::Committed => State::Committed,
            StateArg::Superseded => State::Superseded,
            StateArg::Deleted => State::Deleted,
            StateArg::Recorded => State::Recorded,
            StateArg::Pushed => State::Pushed,
        }
    }
}

#[derive(Debug, Clone, Subcommand)]
pub enum SnapshotsCommand {
    /// List snapshots, newest first (formats: table, wide, name, json, yaml, jsonpath).
    List(ListArgs),
    /// Show one snapshot: metadata, history and the inventory (formats: yaml, json).
    Show {
        /// An id or unique prefix, `latest` or `latest~N`.
        id: String,

        /// Output format (default: yaml).
        #[arg(short = 'o', long = "output", value_name = "FORMAT",
              value_parser = FormatParser::<DocFormat>::new())]
        output: Option<DocFormat>,
    },
    /// Check every checksum and that every object is what its record says; exit 1 on damage
    /// (formats: text, json).
    Verify {
        /// Output format (default: text: the verdict on stdout, each problem on stderr;
        /// json: everything on stdout).
        #[arg(short = 'o', long = "output", value_name = "FORMAT",
              value_parser = FormatParser::<TextFormat>::new())]
        output: Option<TextFormat>,
    },
    /// Delete old snapshots, never the first, the newest N, the last applied or a pending one.
    Gc {
        /// How many of the newest snapshots to keep per domain.
        #[arg(long, default_value_t = 20)]
        keep: usize,
        /// Only list what would be deleted.
        #[arg(long)]
        dry_run: bool,
        /// Run even with damaged journal lines (kept verbatim; every object a damaged
        /// line names is kept too).
        #[arg(long)]
        allow_damage: bool,
        /// Output format (default: text; json lists {domain, id, state, deleted}).
        #[arg(short = 'o', long = "output", value_name = "FORMAT",
              value_parser = FormatParser::<TextFormat>::new())]
        output: Option<TextFormat>,
    },
    /// Write the snapshots of every domain (or of --domain) to a tar file (for sneaker-net).
    Export {
        /// Write the archive even with damaged journal lines or missing or damaged
        /// objects: they (and every snapshot naming such an object) are left out, listed
        /// in the archive's LEFT-OUT entry, and the exit code is still 1.
        #[arg(long)]
        allow_damage: bool,
        /// The archive to write.
        file: PathBuf,
    },
    /// Add the snapshots of an exported tar file (existing records are never
    /// overwritten), or record the artifact an oci:// reference names as a snapshot of its
    /// domain.
    Import(ImportArgs),
}

/// The flags of `clinv snapshots import`.
#[derive(Debug, Clone, Args)]
pub struct ImportArgs {
    /// The archive to read, or oci://REGISTRY/REPOSITORY[:TAG][@DIGEST].
    pub file: PathBuf,

    /// oci://: refuse (exit 17) unless the artifact carries a valid cosign signature by
    /// this public key (PEM).
    #[arg(long, value_name = "KEY")]
    pub verify: Option<PathBuf>,

    #[command(flatten)]
    pub registry: RegistryArgs,
}

#[derive(Debug, Args)]
pub struct IndexArgs {
    /// Write the index to FILE (atomically) instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// Where the addon index comes from and how a URL is fetched.
#[derive(Debug, Args)]
pub struct IndexSourceArgs {
    /// Trust the CA certificates in this PEM file (instead of the built-in web roots)
    /// when fetching an https:// index.
    #[arg(long, value_name = "FILE", env = "CLINV_INDEX_CA")]
    pub index_ca: Option<PathBuf>,

    /// No network: use only the cached copy of a URL index (never fetch); `updates` also
    /// compares the snapshot applied last instead of reading the live cluster.
    #[arg(long)]
    pub offline: bool,

    /// Time limit for fetching a URL index, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 10.0, value_parser = parse_secs)]
    pub fetch_timeout: f64,
}

#[derive(Debug, Args)]
pub struct UpdatesArgs {
    #[command(flatten)]
    pub domain: DomainsArgs,

    /// The addon index: a file, or an https:// URL (cached for --offline).
    #[arg(long, value_name = "FILE|URL", env = "CLINV_INDEX")]
    pub index: String,

    /// Compare this ClusterInventory (a rendered CR in YAML or JSON, or a kubectl dump)
    /// instead of the live or rendered one.
    #[arg(long, value_name = "FILE")]
    pub from: Option<PathBuf>,

    /// Offer pre-releases (1.21.0-rc.1) too; without it they are offered only to an
    /// addon whose current version is a pre-release.
    #[arg(long)]
    pub pre: bool,

    #[command(flatten)]
    pub source: IndexSourceArgs,

    #[command(flatten)]
    pub limits: ClusterArgs,

    #[command(flatten)]
    pub table: TableOutput,
}

#[derive(Debug, Args)]
pub struct AgentArgs {
    /// The addon index: a file, or an https:// URL (cached). Without it, availableUpdates
    /// is left as it is.
    #[arg(long, value_name = "FILE|URL", env = "CLINV_INDEX")]
    pub index: Option<String>,

    #[command(flatten)]
    pub source: IndexSourceArgs,

    /// Time between passes, Go duration syntax (90s, 5m, 1h30m); jittered by ±10%.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_interval)]
    pub interval: std::time::Duration,

    /// One pass, then exit.
    #[arg(long)]
    pub once: bool,

    /// Stop after N passes (for tests).
    #[arg(long, value_name = "N", hide = true)]
    pub max_iterations: Option<u64>,

    #[command(flatten)]
    pub limits: ClusterArgs,
}

/// A positive, finite number of seconds (NaN or infinity would panic a timer).
fn parse_secs(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("'{text}' is not a positive number of seconds")),
    }
}

fn parse_interval(text: &str) -> Result<std::time::Duration, String> {
    crate::catalog::agent::parse_duration(text)
}

/// What `status` and `drift` read: the domains, the cluster limits, `--offline`, and the
/// command's `-o` (`O`: text and json; `status` adds prometheus).
#[derive(Debug, Args)]
pub struct ReadArgs<O: Args = TextOutput> {
    #[command(flatten)]
    pub out: StatusOutArgs<O>,
}

#[derive(Debug, Args)]
pub struct StatusOutArgs<O: Args = TextOutput> {
    #[command(flatten)]
    pub status: StatusArgs,

    #[command(flatten)]
    pub text: O,
}

/// `-o text|json|prometheus` of `clinv status`.
#[derive(Debug, Clone, Default, Args)]
pub struct StatusOutput {
    /// Output format (default: text); prometheus reads only the store (as --offline)
    /// and writes the metrics of docs/guide/metrics.md.
    #[arg(short = 'o', long = "output", value_name = "FORMAT",
          value_parser = FormatParser::<StatusFormat>::new())]
    pub output: Option<StatusFormat>,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    // Several domains (-A, --domain repeated, a glob): a row each, each reached by its own
    // kubeconfig (as replay --all), one --timeout for the whole command; the exit codes are
    // in the commands' about texts.
    #[command(flatten)]
    pub domain: DomainsArgs,

    #[command(flatten)]
    pub limits: ClusterArgs,

    /// Do not read the cluster: answer from the newest snapshot that was applied to it
    /// (never a pending one). Without it, an unreadable cluster is said in the result
    /// and exit 16.
    #[arg(long)]
    pub offline: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn global_flags_work_before_and_after_the_command() {
        let a = Cli::try_parse_from(["clinv", "--strict", "render", "-o", "json"]).unwrap();
        let b = Cli::try_parse_from(["clinv", "render", "--strict", "-o", "json"]).unwrap();
        assert!(a.global.strict && b.global.strict);
        for cli in [a, b] {
            let Command::Render(args) = cli.command else {
                panic!("not render")
            };
            assert_eq!(args.output, Some(DocFormat::Json));
        }
    }

    #[test]
    fn each_command_accepts_only_its_own_formats() {
        let err = Cli::try_parse_from(["clinv", "crd", "-o", "table"]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidValue);
        assert_eq!(
            unsupported_format(&err),
            Some("clinv crd: unsupported output format 'table' (supported: yaml, json)")
        );
        let err = Cli::try_parse_from(["clinv", "snapshots", "list", "-o", "toml"]).unwrap_err();
        assert_eq!(
            unsupported_format(&err),
            Some(
                "clinv snapshots list: unsupported output format 'toml' (supported: table, wide, name, json, yaml, jsonpath=TEMPLATE)"
            )
        );
        // -o belongs to the command: not before it, and not on one that prints no data.
        assert!(Cli::try_parse_from(["clinv", "-o", "json", "render"]).is_err());
        assert!(Cli::try_parse_from(["clinv", "agent", "-o", "json"]).is_err());
        // publish takes -o for the table of several domains, and refuses anything else.
        assert!(Cli::try_parse_from(["clinv", "publish", "-o", "markdown"]).is_err());
        let help = Cli::command()
            .find_subcommand_mut("crd")
            .unwrap()
            .render_long_help()
            .to_string();
        assert!(
            help.contains("yaml") && !help.contains("markdown"),
            "{help}"
        );
    }

    #[test]
    fn tables_take_a_jsonpath_template_and_reject_a_bad_one() {
        let cli =
            Cli::try_parse_from(["clinv", "addons", "-o", "jsonpath={.addons[*].name}"]).unwrap();
        let Command::Addons(args) = cli.command else {
            panic!("not addons")
        };
        let Some(TableFormat::JsonPath(template)) = args.table.output else {
            panic!("{:?}", args.table.output)
        };
        assert_eq!(template.source(), "{.addons[*].name}");
        let err = Cli::try_parse_from(["clinv", "updates", "--index", "i", "-o", "jsonpath={.a"])
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidValue);
        assert_eq!(
            unsupported_format(&err),
            Some("clinv updates: invalid jsonpath template '{.a': unclosed action at column 1")
        );
        // Only the tables have it.
        let err = Cli::try_parse_from(["clinv", "crd", "-o", "jsonpath={.a}"]).unwrap_err();
        assert_eq!(
            unsupported_format(&err),
            Some("clinv crd: unsupported output format 'jsonpath={.a}' (supported: yaml, json)")
        );
    }
}
