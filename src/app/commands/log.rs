//! `clinv log`: what was deployed, when, and what changed — from the snapshot store, or
//! from a GitOps repository's commits with `--repo` ([`crate::view::log`]).

use crate::app::Result;
use crate::app::cli::{LogArgs, LogFormat};
use crate::app::settings::Settings;
use crate::ops::history::Query;
use crate::view::log::{Say, Style};

pub fn run(settings: &Settings, args: &LogArgs) -> Result<i32> {
    if let Some(n) = &args.n {
        return Err(crate::app::Failure::Usage(format!(
            "clinv log: -n is not an option here (git's -n is --max-count {n}; kubectl's -n namespace is --domain {n})"
        )));
    }
    let query = Query {
        since: args.since.as_deref(),
        until: args.until.as_deref(),
        max_count: args.max_count,
        addon: args.addon.as_deref(),
        reverse: args.reverse,
        now: jiff::Timestamp::now(),
    };
    let say = Say {
        console: &settings.printer,
        style: Style {
            format: args.output.unwrap_or_default(),
            oneline: args.oneline,
            strict: settings.strict,
        },
        query: &query,
    };
    if let Some(url) = &args.oci {
        return registry(say, args, url);
    }
    let opened = super::reach(settings)?;
    if let Some(domains) = opened.fleet(args.domain.many())? {
        fleet_usage(args)?;
        return Ok(say.fleet(&opened.store, &domains)?);
    }
    let env = settings.env.domain_name.as_deref();
    let domain = opened.domain(&settings.printer, args.domain.one(), env)?;
    let Some(repo) = &args.repo else {
        return Ok(say.store(&opened.store.domain(&domain))?);
    };
    let branch = args.branch.as_deref();
    let history =
        crate::ops::history::load_said(say.console, &opened.store, &domain, Some(repo), branch)?;
    Ok(say.points(&history.points, &domain)?)
}

/// `log --oci`: the history of the artifacts in a registry, signatures checked first
/// with `--verify`; no store or project needed.
#[cfg(feature = "gitops")]
fn registry(say: Say<'_>, args: &LogArgs, url: &str) -> Result<i32> {
    let reference = crate::oci::parse(url)?;
    let (access, key) = super::registry_reading(&args.registry, args.verify.as_deref())?;
    Ok(say.registry(&reference, &access, key.as_ref())?)
}

#[cfg(not(feature = "gitops"))]
fn registry(_: Say<'_>, _: &LogArgs, _: &str) -> Result<i32> {
    Err(crate::Error::NoGitops("--oci").into())
}

/// `log -A`'s usage: one domain's `--repo` and `-o markdown` take no fleet.
fn fleet_usage(args: &LogArgs) -> Result<()> {
    if args.repo.is_some() {
        return Err(crate::app::Failure::Usage(
            "clinv log: --repo reads one domain's history; it takes no -A, glob or second --domain"
                .to_string(),
        ));
    }
    if args.output.unwrap_or_default() == LogFormat::Markdown {
        return Err(crate::app::Failure::Usage(
            "clinv log -A: -o markdown is one domain's trail; use text, --oneline or -o json"
                .to_string(),
        ));
    }
    Ok(())
}
