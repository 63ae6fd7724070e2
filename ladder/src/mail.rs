//! Sending mail (email verification tokens) through a pluggable [`Mailer`]; the default writes
//! each mail as one file to an outbox folder, so an operator or a test can read what was sent.

use std::path::PathBuf;

/// Why a mail was not delivered (or the outbox not made).
#[derive(Debug, thiserror::Error)]
pub enum MailError {
    #[error("creating the mail outbox {}", dir.display())]
    Outbox {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error("writing {}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// One mail to send.
#[derive(Debug, Clone)]
pub struct Mail {
    pub to: String,
    pub subject: String,
    pub body: String,
}

/// Something that delivers mail.
pub trait Mailer: Send + Sync {
    fn send(&self, mail: &Mail) -> Result<(), MailError>;
}

/// Writes each mail to `<dir>/<millis>-<n>.eml` (headers, blank line, body).
pub struct OutboxMailer {
    dir: PathBuf,
    counter: std::sync::atomic::AtomicU64,
}

impl OutboxMailer {
    pub fn new(dir: PathBuf) -> Result<OutboxMailer, MailError> {
        std::fs::create_dir_all(&dir).map_err(|source| MailError::Outbox {
            dir: dir.clone(),
            source,
        })?;
        Ok(OutboxMailer {
            dir,
            counter: std::sync::atomic::AtomicU64::new(0),
        })
    }
}

impl Mailer for OutboxMailer {
    fn send(&self, mail: &Mail) -> Result<(), MailError> {
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
        std::fs::write(&tmp, text).map_err(|source| MailError::Write {
            path: tmp.clone(),
            source,
        })?;
        std::fs::rename(&tmp, &path).map_err(|source| MailError::Write {
            path: path.clone(),
            source,
        })?;
        tracing::info!(to = %mail.to, file = %path.display(), "mail written to the outbox");
        Ok(())
    }
}
