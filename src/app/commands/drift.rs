//! `clinv drift`: does the cluster hold what the project renders? Exit 0 in sync, 1
//! drift (the changes listed like `clinv diff`), 2 unknown or an error, 16 the live
//! cluster could not be read (said in the result; `--offline` compares with the snapshot
//! applied last instead).

use crate::app::Result;
use crate::app::cli::{DriftOutput, ReadArgs};
use crate::app::settings::Settings;
use crate::error::Outcome;
use crate::view::drift::{Ask, say};

pub fn run(settings: &Settings, read: &ReadArgs<DriftOutput>) -> Result<Outcome> {
    let status = &read.out.status;
    let project = super::project(settings)?;
    let ask = Ask {
        format: read.out.text.output.unwrap_or_default(),
        offline: status.offline,
    };
    let live = super::live(settings, &status.limits);
    let selection = super::selection(&status.domain);
    let refuse = || super::one_kubeconfig_each("drift", &status.limits);
    say(
        super::context(settings),
        &live,
        &project,
        selection,
        ask,
        refuse,
    )
}
