//! Reading games back: my challenges, scouting an opponent's recent games (with compact moves),
//! the public leaderboard and a replay's detail.

use games::qianwang::MatchRecord;
use serde_json::{json, Value};

use super::{tier_json, Ladder};
use crate::db::{MatchRow, PlayerRow};
use crate::error::{ApiError, Internal};

impl Ladder {
    /// Games summary of one stored match from `player`'s point of view.
    fn game_json(m: &MatchRow, player: i64, with_moves: bool) -> Value {
        let side = if m.black_id == player { "black" } else { "red" };
        let (opp_id, opp_name) = if side == "black" {
            (m.red_id, &m.red_name)
        } else {
            (m.black_id, &m.black_name)
        };
        let result = match m.winner.as_deref() {
            None => "draw",
            Some(w) if w == side => "win",
            Some(_) => "loss",
        };
        let mut v = json!({"urlId": m.url_id, "challengeId": m.challenge_id, "colour": side,
            "opponent": {"botId": opp_id, "name": opp_name}, "result": result, "winner": m.winner,
            "reason": m.reason, "turns": m.turns, "seed": m.seed, "createdAt": m.created_ms,
            "version": if side == "black" { m.black_version } else { m.red_version }});
        if with_moves {
            if let Ok(rec) = MatchRecord::from_json(&m.record) {
                let moves: Vec<String> = rec
                    .plies
                    .iter()
                    .map(|p| match &p.mv {
                        Some(mv) => format!(
                            "{}{},{}>{},{}{}",
                            &p.side.as_str()[..1],
                            mv.from[0],
                            mv.from[1],
                            mv.to[0],
                            mv.to[1],
                            if p.captured.is_empty() { "" } else { "x" }
                        ),
                        None => format!("{}pass", &p.side.as_str()[..1]),
                    })
                    .collect();
                v["moves"] = json!(moves);
            }
        }
        v
    }

    pub async fn my_matches(&self, me: &PlayerRow, limit: i64) -> Result<Value, ApiError> {
        let mut out = Vec::new();
        for c in self.db.challenges_of(me.id, limit).await? {
            let mine = c.challenger_id == me.id;
            let opp = if mine {
                c.challenged_id
            } else {
                c.challenger_id
            };
            let opp_name = self.db.player_by_id(opp).await?.map(|p| p.name);
            let result = match (mine, c.result.as_str()) {
                (true, r) => r.to_string(),
                (false, "win") => "loss".into(),
                (false, "loss") => "win".into(),
                (false, r) => r.to_string(),
            };
            let games: Vec<Value> = self
                .db
                .matches_of_challenge(c.id)
                .await?
                .iter()
                .map(|m| Self::game_json(m, me.id, false))
                .collect();
            out.push(
                json!({"challengeId": c.id, "role": if mine {"challenger"} else {"challenged"},
                "opponent": {"botId": opp, "name": opp_name}, "result": result, "scored": c.scored.0,
                "rpDelta": if mine { c.challenger_delta } else { c.challenged_delta },
                "rpAfter": if mine { c.challenger_rp } else { c.challenged_rp },
                "eloDelta": c.elo_delta.map(|d| if mine { d } else { -d }),
                "eloAfter": if mine { c.challenger_elo } else { c.challenged_elo },
                "createdAt": c.created_ms, "games": games}),
            );
        }
        Ok(json!({"botId": me.id, "challenges": out}))
    }

    pub async fn scout(&self, target: i64, limit: i64) -> Result<Value, ApiError> {
        let p = self.player(target).await?;
        let games: Vec<Value> = self
            .db
            .matches_of(p.id, limit)
            .await?
            .iter()
            .map(|m| Self::game_json(m, p.id, true))
            .collect();
        Ok(
            json!({"bot": {"botId": p.id, "name": p.name, "rp": p.rp, "tier": tier_json(p.rp), "elo": p.elo,
            "currentVersion": p.current_version}, "matches": games}),
        )
    }

    pub async fn leaderboard(&self) -> Result<Value, ApiError> {
        let players = self.db.players().await?;
        let list: Vec<Value> = players
            .iter()
            .enumerate()
            .map(|(i, p)| {
                json!({"rank": i + 1, "botId": p.id, "name": p.name, "rp": p.rp, "tier": tier_json(p.rp), "elo": p.elo,
                    "wins": p.wins, "draws": p.draws, "losses": p.losses, "version": p.current_version})
            })
            .collect();
        Ok(json!({"players": list}))
    }

    pub async fn match_detail(&self, url_id: &str) -> Result<Value, ApiError> {
        // No match id holds a NUL, and PostgreSQL cannot even compare text holding one.
        if url_id.contains('\0') {
            return Err(ApiError::not_found(
                "unknown_match",
                format!("no match {url_id:?}"),
            ));
        }
        let m =
            self.db.match_by_url(url_id).await?.ok_or_else(|| {
                ApiError::not_found("unknown_match", format!("no match {url_id:?}"))
            })?;
        let rec: Value = serde_json::from_str(&m.record).map_err(|source| {
            ApiError::internal(Internal::Record {
                url_id: url_id.to_string(),
                source,
            })
        })?;
        Ok(json!({
            "urlId": m.url_id, "challengeId": m.challenge_id, "createdAt": m.created_ms, "seed": m.seed,
            "black": {"botId": m.black_id, "name": m.black_name, "version": m.black_version, "codeSha256": m.black_sha},
            "red": {"botId": m.red_id, "name": m.red_name, "version": m.red_version, "codeSha256": m.red_sha},
            "winner": m.winner, "reason": m.reason, "turns": m.turns,
            "outcome": rec["outcome"], "plies": rec["plies"], "version": rec["version"],
            "initialBoard": games::qianwang::Board::initial(),
        }))
    }
}
