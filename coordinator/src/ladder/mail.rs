//! Sending mail (email verification tokens) through a pluggable [`Mailer`]; the default writes
//! each mail as one file to an outbox folder, so an operator or a test can read what was sent.

use std::path::PathBuf;

use anyhow::{Context, Result};

/// One mail to send.
#[derive(Debug, Clone)]
pub struct Mail {
    pub to: String,
    pub subject: String,
    pub body: String,
}

/// Something that delivers mail.
pub trait Mailer: Send + Sync {
    fn send(&self, mail: &Mail) -> Result<()>;
}

/// Writes each mail to `<dir>/<millis>-<n>.eml` (headers, blank line, body).
pub struct OutboxMailer {
    dir: PathBuf,
    counter: std::sync::atomic::AtomicU64,
}

impl OutboxMailer {
    pub fn new(dir: PathBuf) -> Result<OutboxMailer> {
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("creating the mail outbox {}", dir.display()))?;
        Ok(OutboxMailer {
            dir,
            counter: std::sync::atomic::AtomicU64::new(0),
        })
    }
}

impl Mailer for OutboxMailer {
    fn send(&self, mail: &Mail) -> Result<()> {
        let n = self
            .counter
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("{}-{}-{n}.eml", super::db::now_ms(), std::process::id());
        let path = self.dir.join(name);
        let text = format!(
            "To: {}\nSubject: {}\n\n{}\n",
            mail.to.replace(['\r', '\n'], " "),
            mail.subject.replace(['\r', '\n'], " "),
            mail.body
        );
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
        std::fs::rename(&tmp, &path).with_context(|| format!("writing {}", path.display()))?;
        tracing::info!(to = %mail.to, file = %path.display(), "mail written to the outbox");
        Ok(())
    }
}
