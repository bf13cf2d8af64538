//! `clinv version`: what this build is, for bug reports and compatibility checks
//! ([`crate::view::version`]).

use crate::app::Result;
use crate::app::cli::TextOutput;
use crate::app::settings::Settings;

pub fn run(settings: &Settings, args: &TextOutput) -> Result<i32> {
    let format = args.output.unwrap_or_default();
    Ok(crate::view::version::say(&settings.printer, format)?)
}
