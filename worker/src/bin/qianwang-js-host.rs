//! The 钳王 JavaScript child for the worker crate's own tests and benches (which have no `farm`
//! binary): what `farm __js-bot` runs, [`worker::qianwang::serve_child`]. Deployments use
//! `farm` itself; this program is never shipped.

fn main() {
    std::process::exit(worker::qianwang::serve_child());
}
