//! `farm manifest DIR`: write MANIFEST.json for a referee package, so `farm run` can refuse a
//! package whose files were changed.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

#[derive(Args, Debug)]
pub struct ManifestArgs {
    /// The referee package folder. Every regular file in it is listed except hidden ones
    /// (names starting with a dot); a symbolic link or other special file is refused by name
    /// (replace it with a copy of the file): workers receive file contents, not links.
    pub dir: PathBuf,
}

pub fn run(args: ManifestArgs) -> Result<ExitCode> {
    let n = crate::workspace::write(&args.dir)?;
    println!(
        "wrote {} ({n} files)",
        args.dir.join(crate::workspace::MANIFEST).display()
    );
    Ok(ExitCode::SUCCESS)
}
