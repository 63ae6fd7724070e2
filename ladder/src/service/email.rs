//! Email verification: a token mailed to the address (hashed in the database, 24 hours, one
//! use), confirmed through the public endpoint.

use serde_json::{json, Value};

use super::{key_hash, random_hex, Ladder, EMAIL_TOKEN_MS};
use crate::db::{now_ms, PlayerRow};
use crate::error::{ApiError, Internal};
use crate::mail::Mail;

impl Ladder {
    /// Sends a verification token to `email` (or the stored address).
    pub async fn request_email(
        &self,
        me: &PlayerRow,
        email: Option<String>,
    ) -> Result<Value, ApiError> {
        let email = email.unwrap_or_else(|| me.email.clone());
        let ok = email.len() <= 254
            && email
                .split_once('@')
                .is_some_and(|(a, b)| !a.is_empty() && b.contains('.'))
            && !email.contains(char::is_whitespace);
        if !ok {
            return Err(ApiError::bad_request(
                "invalid_email",
                format!("{email:?} is not an email address"),
            ));
        }
        let token = random_hex(16);
        self.db
            .add_email_token(&key_hash(&token), me.id, &email, now_ms() + EMAIL_TOKEN_MS)
            .await?;
        let mail = Mail {
            to: email.clone(),
            subject: "钳王争霸: verify your email".into(),
            body: format!(
                "Bot {} (botId {}): your verification token is\n\n{token}\n\nConfirm with POST /api/email/verify {{\"token\": \"{token}\"}} within 24 hours.",
                me.name, me.id
            ),
        };
        let mailer = self.mailer.clone();
        tokio::task::spawn_blocking(move || mailer.send(&mail))
            .await
            .map_err(|source| {
                ApiError::internal(Internal::Task {
                    what: "mail",
                    source,
                })
            })??;
        Ok(json!({"sent": true, "email": email}))
    }

    pub async fn confirm_email(&self, token: &str) -> Result<Value, ApiError> {
        match self.db.use_email_token(&key_hash(token)).await? {
            Some(id) => Ok(json!({"verified": true, "botId": id})),
            None => Err(ApiError::bad_request(
                "invalid_token",
                "this token is unknown, already used or expired; request a new one",
            )),
        }
    }
}
