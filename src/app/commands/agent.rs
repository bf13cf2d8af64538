//! `clinv agent`: the in-cluster status writer (see [`crate::ops::agent`]).

use super::fetch_options;
use super::{access, fail_soft, print_notices};
use crate::app::Result;
use crate::app::cli::AgentArgs;
use crate::app::settings::Settings;
use crate::catalog::fetch::IndexRef;
use crate::cluster::access::options;
use crate::error::Outcome;
use crate::ops::agent::{self, Config, Pass};

pub fn run(settings: &Settings, args: &AgentArgs) -> Result<Outcome> {
    let cfg = Config {
        index: args.index.as_deref().map(IndexRef::parse).transpose()?,
        fetch: fetch_options(settings, &args.source),
        access: access(settings, &args.limits),
        in_cluster: settings.env.in_cluster,
        opts: options(args.limits.timeout, args.limits.probe_timeout, false, false),
        strict_once: args.once && settings.strict,
        interval: args.interval,
        max_iterations: args.max_iterations,
    };
    if !args.once {
        agent::run(&cfg, |lines| print_notices(settings, lines))?;
        return Ok(Outcome::Done);
    }
    let report = agent::once(&cfg)?;
    print_notices(settings, &report.notices);
    match report.pass {
        pass @ Pass::Wrote { .. } => {
            settings.printer.info(&pass.line());
            Ok(Outcome::Done)
        }
        Pass::NotWritten {
            reason, message, ..
        } => fail_soft(settings, reason, message),
        Pass::IndexFailed(e) => Err(e.into()),
    }
}
