//! `clinv index`: the project's addon index (spec §10), as lok8s's docs build writes it
//! ([`crate::view::index`]).

use crate::app::Result;
use crate::app::cli::IndexArgs;
use crate::app::settings::Settings;

pub fn run(settings: &Settings, args: &IndexArgs) -> Result<i32> {
    let project = super::project(settings)?;
    let build = (settings.env.source_date_epoch.as_deref(), settings.strict);
    let out = args.out.as_deref();
    Ok(crate::view::index::say(
        &settings.printer,
        &project,
        build,
        out,
    )?)
}
