//! `clinv diff A B`: the semantic diff of two inventories, in one of four formats.
//! Exit codes follow diff/kubectl: 0 same, 1 different, 2 any error (`app::run` maps
//! every failure of diff and drift to 2).
//!
//! With several domains (`-A`, `--domain` repeated, a glob) each domain's A and B are
//! resolved for that domain (its snapshots, its `git:` folder, its cluster), up to 64 at
//! once within the one `--timeout`: one section per domain, a domain that cannot be
//! compared said on stderr (exit 2 once all are shown).

use crate::app::cli::{DiffArgs, DiffFormat};
use crate::app::settings::Settings;
use crate::app::{Failure, Result};
use crate::cluster::access::{self, Access};
use crate::domain::Domain;
use crate::error::exit;
use crate::history::diff::{Ignore, Report};
use crate::ops::refs::{Compared, RefContext, compare};
use crate::project::Project;
use crate::view::report;

pub fn run(settings: &Settings, args: &DiffArgs) -> Result<i32> {
    let ignore = Ignore::parse(&args.ignore)?;
    let access = super::access(settings, &args.limits);
    #[cfg(feature = "gitops")]
    let (registry, key) = super::registry_reading(&args.registry, args.verify.as_deref())?;
    let sources = Sources {
        settings,
        args,
        access: &access,
        #[cfg(feature = "gitops")]
        registry: (&registry, key.as_ref()),
    };
    if let Some(domains) = fleet(settings, args)? {
        return several(&sources, &ignore, domains);
    }
    let deadline = access::options(args.limits.timeout, args.limits.probe_timeout, false, false);
    let compared = sources.compare(args.domain.one(), deadline, &ignore);
    print_messages(settings, &compared.1);
    let compared = compared.0?;
    warn_unmatched(settings, &compared)?;
    let text = text(args, &compared, settings.printer.color_stdout())?;
    settings.printer.data(&text)?;
    Ok(verdict(compared.report.has_changes))
}

/// Where the references are read from, for any domain.
struct Sources<'a> {
    settings: &'a Settings,
    args: &'a DiffArgs,
    access: &'a Access,
    #[cfg(feature = "gitops")]
    registry: (&'a crate::oci::Access, Option<&'a crate::oci::PublicKey>),
}

/// What a reference's resolution said on the way: lok8s's notices and clinv's notes.
type Messages = (Vec<String>, Vec<String>);

impl Sources<'_> {
    /// A and B of `domain` (the one-domain rule when `None`), compared within `opts`.
    fn compare(
        &self,
        domain: Option<&str>,
        opts: crate::cluster::Options,
        ignore: &Ignore,
    ) -> (crate::error::Result<Compared>, Messages) {
        let settings = self.settings;
        let mut cx = RefContext::new(&settings.cwd);
        cx.root = settings.root.as_deref();
        cx.domain = domain;
        cx.env_domain = settings.env.domain_name.as_deref();
        cx.snapshots = settings.snapshots.as_deref();
        cx.repo = self.args.repo.as_deref();
        cx.cluster = Some((self.access, opts));
        #[cfg(feature = "gitops")]
        {
            cx.registry = Some(self.registry);
        }
        let compared = compare(&cx, &self.args.from, &self.args.to, ignore);
        (compared, (cx.take_notices(), cx.take_notes()))
    }
}

fn print_messages(settings: &Settings, (notices, notes): &Messages) {
    for notice in notices {
        settings.printer.raw(notice);
    }
    for note in notes {
        settings.printer.info(note);
    }
}

/// An `--ignore` path that selects nothing: a typo ignores nothing, never silently.
fn warn_unmatched(settings: &Settings, compared: &Compared) -> Result<()> {
    for unmatched in &compared.unmatched {
        if settings.strict {
            return Err(crate::error::Error::from(unmatched.clone()).into());
        }
        settings.printer.warn(&unmatched.to_string());
    }
    Ok(())
}

/// One comparison in the format asked for.
fn text(args: &DiffArgs, compared: &Compared, color: bool) -> Result<String> {
    let (report, a, b) = (&compared.report, &compared.from, &compared.to);
    Ok(match args.output.unwrap_or_default() {
        DiffFormat::Json => report::json::diff(report)?,
        DiffFormat::Markdown => report::markdown::diff(report),
        DiffFormat::Unified => report::unified::diff(report, &a.inventory, &b.inventory, color)?,
        _ if args.stat => report::text::header(report, color) + &report::text::stat(report, color),
        _ => report::text::header(report, color) + &report::text::diff(report, color),
    })
}

fn verdict(changed: bool) -> i32 {
    if changed {
        exit::diff::DIFFERENT
    } else {
        exit::diff::SAME
    }
}

/// The domains of a fleet selection — the project's, else the store's — and the project
/// (for its deploy domains); `None` for one plain `--domain` or none.
fn fleet(settings: &Settings, args: &DiffArgs) -> Result<Option<(Option<Project>, Vec<Domain>)>> {
    if !args.domain.many().is_many() {
        return Ok(None);
    }
    super::one_kubeconfig_each("diff", &args.limits)?;
    if args.from == "-" || args.to == "-" {
        return Err(Failure::Usage(
            "clinv diff with several domains: '-' (stdin) is one inventory, not one per domain"
                .to_string(),
        ));
    }
    let opened = super::reach(settings)?;
    let domains = match &opened.project {
        Some(project) => super::fleet(project, &args.domain)?,
        None => opened.fleet(args.domain.many())?,
    };
    Ok(domains.map(|domains| (opened.project, domains)))
}

/// Each domain's comparison, one section each in the order given: text and markdown one
/// after the other (text under a `== DOMAIN ==` line), `-o json` a list of reports.
fn several(
    sources: &Sources<'_>,
    ignore: &Ignore,
    (project, domains): (Option<Project>, Vec<Domain>),
) -> Result<i32> {
    let (settings, args) = (sources.settings, sources.args);
    let limits = crate::fleet::Limits {
        timeout: args.limits.timeout,
        probe_timeout: args.limits.probe_timeout,
    };
    let compare = |d: &Domain, left: crate::fleet::Limits| {
        let opts = access::options(left.timeout, left.probe_timeout, false, false);
        Some(sources.compare(Some(d.as_str()), opts, ignore))
    };
    // A deploy domain has no inventory of its own: said, not compared.
    let skip = |d: &Domain, why: crate::fleet::Skip| match why {
        crate::fleet::Skip::Deploy(cluster_ref) => {
            super::deploy_domain_note(settings, d, cluster_ref.as_deref());
            None
        }
        not_tried => {
            let (word, detail) = not_tried.words();
            let e = crate::Error::Unapplied {
                reason: crate::delivery::Reason::Unreachable,
                message: format!("{word}: {detail}"),
            };
            Some((Err(e), Messages::default()))
        }
    };
    let results = crate::fleet::each(project.as_ref(), &domains, limits, compare, skip);
    let color = settings.printer.color_stdout();
    let (mut reports, mut out, mut failed, mut changed): (Vec<&Report>, String, bool, bool) =
        (Vec::new(), String::new(), false, false);
    let answered = domains.iter().zip(&results);
    for (domain, (compared, messages)) in answered.filter_map(|(d, r)| Some((d, r.as_ref()?))) {
        print_messages(settings, messages);
        let compared = match compared {
            Ok(c) => c,
            Err(e) => {
                settings
                    .printer
                    .error(&format!("{domain}: {}", crate::error::chain(e)));
                failed = true;
                continue;
            }
        };
        warn_unmatched(settings, compared)?;
        changed |= compared.report.has_changes;
        match args.output.unwrap_or_default() {
            DiffFormat::Json => reports.push(&compared.report),
            DiffFormat::Markdown | DiffFormat::Unified => {
                out.push_str(&text(args, compared, color)?)
            }
            DiffFormat::Text => {
                out.push_str(&format!("== {domain} ==\n{}", text(args, compared, color)?))
            }
        }
    }
    if args.output == Some(DiffFormat::Json) {
        out = crate::inventory::render::to_json(&reports)?;
    }
    settings.printer.data(&out)?;
    Ok(if failed {
        exit::diff::ERROR
    } else {
        verdict(changed)
    })
}
