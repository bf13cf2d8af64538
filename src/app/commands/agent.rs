//! `clinv agent`: the in-cluster status writer (see [`crate::ops::agent`]).

use crate::app::Result;
use crate::app::cli::AgentArgs;
use crate::app::settings::Settings;
use crate::catalog::fetch::IndexRef;
use crate::cluster::access::options;
use crate::error::Outcome;
use crate::ops::agent::{self, Config};

pub fn run(settings: &Settings, args: &AgentArgs) -> Result<Outcome> {
    let cfg = Config {
        index: args.index.as_deref().map(IndexRef::parse).transpose()?,
        fetch: super::fetch_options(settings, &args.source),
        access: super::access(settings, &args.limits),
        in_cluster: settings.env.in_cluster,
        opts: options(args.limits.timeout, args.limits.probe_timeout, false, false),
        strict_once: args.once && settings.strict,
        interval: args.interval,
        max_iterations: args.max_iterations,
    };
    Ok(agent::say(super::context(settings), &cfg, args.once)?)
}
