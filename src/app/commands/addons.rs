//! `clinv addons`: the `lo addons --detail` view of a domain (spec §9).

use crate::app::Result;
use crate::app::cli::AddonsArgs;
use crate::app::settings::Settings;

pub fn run(settings: &Settings, args: &AddonsArgs) -> Result<i32> {
    let project = super::project(settings)?;
    let selection = super::selection(&args.domain);
    let cx = super::context(settings);
    Ok(crate::view::addons::say(
        cx,
        &project,
        selection,
        &args.table.plain(),
    )?)
}
