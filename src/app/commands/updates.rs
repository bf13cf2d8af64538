//! `clinv updates`: which addons have a newer version in the addon index.

use crate::app::Result;
use crate::app::cli::UpdatesArgs;
use crate::app::settings::Settings;
use crate::view::updates::{Ask, say};

pub fn run(settings: &Settings, args: &UpdatesArgs) -> Result<i32> {
    if args.from.is_some() && args.domain.many().is_many() {
        return Err(crate::app::Failure::Usage(
            "clinv updates: --from FILE is one inventory; it takes no -A, glob or second --domain"
                .into(),
        ));
    }
    let ask = Ask {
        index: &args.index,
        fetch: super::fetch_options(settings, &args.source),
        from: args.from.as_deref(),
        offline: args.source.offline,
        pre: args.pre,
        table: args.table.plain(),
    };
    let live = super::live(settings, &args.limits);
    let selection = super::selection(&args.domain);
    let refuse = || super::one_kubeconfig_each("updates", &args.limits);
    say(super::context(settings), &live, selection, &ask, refuse)
}
