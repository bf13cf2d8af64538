//! `clinv status`: the `lo status` inventory block, read from the live cluster, and the
//! domain's delivery (source, ages, last apply, queue).

use crate::app::Result;
use crate::app::cli::{ReadArgs, StatusFormat, StatusOutput};
use crate::app::settings::Settings;
use crate::error::Outcome;
use crate::view::status::{Ask, say};

pub fn run(settings: &Settings, read: &ReadArgs<StatusOutput>) -> Result<Outcome> {
    let (status, format) = (&read.out.status, read.out.text.output);
    let project = super::project(settings)?;
    let selection = super::selection(&status.domain);
    if format == Some(StatusFormat::Prometheus) {
        let cx = super::context(settings);
        return Ok(crate::view::metrics::say(cx, &project, selection)?);
    }
    let ask = Ask {
        format,
        offline: status.offline,
    };
    let live = super::live(settings, &status.limits);
    let refuse = || super::one_kubeconfig_each("status", &status.limits);
    say(
        super::context(settings),
        &live,
        &project,
        selection,
        ask,
        refuse,
    )
}
