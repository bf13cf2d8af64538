//! Command-line interface: clap types only. They are turned into [`crate::settings`]
//! once and go no deeper than the command functions.

use crate::output::ColorChoice;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

const EXIT_CODES: &str = "\
Exit codes:
  0  success (fail-soft commands also exit 0 after a warning)
  1  invalid input, a refused render, or a failed command
  2  usage error (unknown flag, bad value, unsupported -o format)
clinv diff: 0 same, 1 different, 2 any error.";

/// Offline-first exporter for the lok8s ClusterInventory.
///
/// clinv reads a lok8s project (.lok8s/, clusters/<domain>/cluster.lok8s.yaml) and renders
/// the ClusterInventory custom resource and its CRD exactly as lok8s does.
#[derive(Debug, Parser)]
#[command(name = "clinv", version, propagate_version = true, after_help = EXIT_CODES)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,

    #[command(subcommand)]
    pub command: Command,
}

/// Flags accepted before or after the command name.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Project root (default: nearest ancestor holding .lok8s/ or clusters/).
    #[arg(long, global = true, value_name = "DIR")]
    pub root: Option<PathBuf>,

    /// Snapshot store (default: <root>/snapshots).
    #[arg(long, global = true, value_name = "DIR", env = "CLINV_SNAPSHOTS")]
    pub snapshots: Option<PathBuf>,

    /// Kubeconfig file for commands that talk to a cluster.
    #[arg(long, global = true, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,

    /// Kubeconfig context to use.
    #[arg(long, global = true, value_name = "NAME")]
    pub context: Option<String>,

    /// Output format (each command lists the formats it supports).
    #[arg(short = 'o', long = "output", global = true, value_name = "FORMAT")]
    pub output: Option<OutputFormat>,

    /// Print only data and errors.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,

    /// Print debug lines (also enabled by a non-empty DEBUG variable).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,

    /// Colour the [warn]/[error] tags and reports (diff): auto (terminal and no NO_COLOR), always, never.
    #[arg(long, global = true, value_name = "WHEN", default_value = "auto")]
    pub color: ColorChoice,

    /// Treat every warning as an error.
    #[arg(long, global = true)]
    pub strict: bool,
}

/// Output formats across commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    Yaml,
    Json,
    Table,
    Text,
    Markdown,
    Unified,
}

impl OutputFormat {
    pub fn name(self) -> &'static str {
        match self {
            OutputFormat::Yaml => "yaml",
            OutputFormat::Json => "json",
            OutputFormat::Table => "table",
            OutputFormat::Text => "text",
            OutputFormat::Markdown => "markdown",
            OutputFormat::Unified => "unified",
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Render the ClusterInventory of a domain (stdout, or two files with --out).
    ///
    /// Formats: yaml (default), json (lok8s's pretty JSON plus a newline). The object is
    /// checked against the CRD first; a render that the API server would reject fails.
    Render(RenderArgs),

    /// Print the ClusterInventory CRD (formats: yaml, json).
    Crd,

    /// List the addons a domain deploys, like `lo addons --detail` (formats: table, json).
    Addons(DomainArgs),

    /// Render the inventory and server-side apply the CRD and the CR (field manager lok8s).
    ///
    /// Fail-soft like lok8s: an unreachable cluster, a missing kubeconfig, missing RBAC,
    /// a conflicting CRD or a render failure print a [warn] and exit 0. With --strict they
    /// exit with the code of their reason (see the README).
    Publish(PublishArgs),

    /// Show the `lo status` inventory block read from the live cluster.
    Status(StatusArgs),

    /// Compare two inventories semantically: addons added, removed, upgraded, downgraded,
    /// changed; Kubernetes version and the other spec fields.
    ///
    /// A and B are each a file (a rendered CR in YAML or JSON, a `kubectl get -o yaml|json`
    /// dump, or a `render --out` directory), `-` for stdin, or `cluster` for the live
    /// object. Formats: text (default), json, markdown, unified. renderedAt and
    /// server-owned metadata never count as a change.
    ///
    /// Exit codes (the diff/kubectl convention): 0 same, 1 different, 2 any error.
    #[command(after_help = IGNORE_HELP)]
    Diff(DiffArgs),

    /// Print a shell completion script.
    Completions {
        /// The shell to generate for.
        shell: clap_complete::Shell,
    },
}

const IGNORE_HELP: &str = "\
--ignore PATH ignores every change at or below PATH; ignored changes are listed apart and
never change the exit code. PATH is one of:
  spec.FIELD                  lok8sVersion, kind, specHash, provider, kubernetesVersion
  spec.addons[SEL]            an addon: its addition, removal and every field change
  spec.addons[SEL].FIELD      chartVersion, appVersion, category, source
  metadata.labels[KEY]        e.g. metadata.labels[lok8s.dev/domain]
  apiVersion, spec, spec.addons, metadata
SEL is a name (every occurrence), NAME#N (the N-th occurrence), * or *#N.";

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The older inventory: FILE, DIR (from render --out), - (stdin) or cluster.
    #[arg(value_name = "A")]
    pub from: String,

    /// The newer inventory, same forms as A.
    #[arg(value_name = "B")]
    pub to: String,

    /// Ignore changes at or below PATH (repeatable), e.g. spec.specHash, spec.addons[*].category.
    #[arg(long, value_name = "PATH")]
    pub ignore: Vec<String>,

    /// Domain whose kubeconfig `cluster` uses (lok8s's .kubeconfig/<name>.yaml).
    #[arg(long, value_name = "D")]
    pub domain: Option<String>,

    #[command(flatten)]
    pub limits: ClusterArgs,
}

#[derive(Debug, Args)]
pub struct DomainArgs {
    /// Cluster domain (default: DOMAIN_NAME, then clusters/.active, then lok8s.dev).
    #[arg(long, value_name = "D")]
    pub domain: Option<String>,
}

#[derive(Debug, Args)]
pub struct RenderArgs {
    #[command(flatten)]
    pub domain: DomainArgs,

    /// Write DIR/clusterinventory.crd.yaml and DIR/clusterinventory.yaml atomically.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// Limits for commands that talk to a cluster.
#[derive(Debug, Args)]
pub struct ClusterArgs {
    /// Deadline for the whole operation, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 30.0)]
    pub timeout: f64,

    /// Budget for reaching the API server (connect and the first request), in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 3.0)]
    pub probe_timeout: f64,
}

#[derive(Debug, Args)]
pub struct PublishArgs {
    #[command(flatten)]
    pub domain: DomainArgs,

    #[command(flatten)]
    pub limits: ClusterArgs,

    /// Take over fields owned by another field manager.
    #[arg(long)]
    pub force_conflicts: bool,

    /// Server-side dry run: print what would change, persist nothing.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    #[command(flatten)]
    pub domain: DomainArgs,

    #[command(flatten)]
    pub limits: ClusterArgs,
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
        let a = Cli::try_parse_from(["clinv", "--strict", "-o", "json", "render"]).unwrap();
        let b = Cli::try_parse_from(["clinv", "render", "--strict", "-o", "json"]).unwrap();
        assert!(a.global.strict && b.global.strict);
        assert_eq!(a.global.output, Some(OutputFormat::Json));
        assert_eq!(b.global.output, Some(OutputFormat::Json));
    }
}
