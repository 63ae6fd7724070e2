//! A challenge: two games (one per colour, fresh seeds), the anti-farming count per code-hash
//! pair, and settlement of RP (`games::qianwang::ladder::settle`) and Elo (`ladder::elo`) for
//! scored challenges, stored with both games in one transaction.

use axum::http::StatusCode;
use games::qianwang::ladder::{combine, settle, PlayerResult};
use games::qianwang::{MatchRecord, Side};
use rand::RngCore;
use serde_json::{json, Value};

use super::{colour, random_hex, reason_str, result_str, tier_json, Ladder, SCORED_PER_PAIR};
use crate::db::{now_ms, pair_key, ChallengeWrite, MatchRow, PlayerRow};
use crate::elo;
use crate::error::{ApiError, Internal};
use crate::farm::Contender;
use crate::metrics;

impl Ladder {
    pub async fn challenge(&self, me: &PlayerRow, target: i64) -> Result<Value, ApiError> {
        if !me.email_verified.0 {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "email_not_verified",
                "challenges need a verified email: POST /api/agent/email/request, then confirm the token",
            ));
        }
        if target == me.id {
            return Err(ApiError::bad_request(
                "self_challenge",
                "you cannot challenge your own bot",
            ));
        }
        let them = self.player(target).await?;
        let (my_v, my_sha) = self.current_sha(me).await?.ok_or_else(|| {
            ApiError::new(
                StatusCode::CONFLICT,
                "no_code",
                "publish code before challenging",
            )
        })?;
        let (their_v, their_sha) = self.current_sha(&them).await?.ok_or_else(|| {
            ApiError::new(
                StatusCode::CONFLICT,
                "no_code",
                format!("bot {} has no published code yet", them.id),
            )
        })?;
        self.materialize(&my_sha).await?;
        self.materialize(&their_sha).await?;
        let seat = |p: &PlayerRow, sha: &str| Contender {
            name: p.name.clone(),
            sha256: sha.to_string(),
        };
        // 53-bit seeds: exact as JSON numbers in JavaScript clients too.
        let seeds = [
            rand::thread_rng().next_u64() >> 11,
            rand::thread_rng().next_u64() >> 11,
        ];
        let g1 = {
            let farm = self.farm.clone();
            let (b, r) = (seat(me, &my_sha), seat(&them, &their_sha));
            tokio::spawn(async move { farm.play(b, r, seeds[0]).await })
        };
        let g2 = {
            let farm = self.farm.clone();
            let (b, r) = (seat(&them, &their_sha), seat(me, &my_sha));
            tokio::spawn(async move { farm.play(b, r, seeds[1]).await })
        };
        let join = |source| {
            ApiError::internal(Internal::Task {
                what: "game",
                source,
            })
        };
        let r1 = g1.await.map_err(join)??;
        let r2 = g2.await.map_err(join)??;
        let m = metrics::global();
        m.matches.with_label_values(&["challenge"]).inc_by(2);
        let res1 = PlayerResult::of(&r1.outcome, Side::Black);
        let res2 = PlayerResult::of(&r2.outcome, Side::Red);
        let result = combine(res1, res2);

        let _w = self.write_lock.lock().await;
        // Re-read both standings under the lock: other challenges may have settled meanwhile.
        let me_now = self.player(me.id).await?;
        let them_now = self.player(them.id).await?;
        let before = self.db.pair_count(&pair_key(&my_sha, &their_sha)).await?;
        let scored = before < SCORED_PER_PAIR;
        let st = Standing::after(&me_now, &them_now, scored, (res1, res2));
        let now = now_ms();
        let row = |rec: &MatchRecord,
                   black: (&PlayerRow, i64, &str),
                   red: (&PlayerRow, i64, &str)| MatchRow {
            url_id: random_hex(8),
            challenge_id: 0,
            black_id: black.0.id,
            red_id: red.0.id,
            black_name: black.0.name.clone(),
            red_name: red.0.name.clone(),
            black_version: black.1,
            red_version: red.1,
            black_sha: black.2.to_string(),
            red_sha: red.2.to_string(),
            seed: rec.seed as i64,
            winner: rec.outcome.winner.map(|s| s.as_str().to_string()),
            reason: reason_str(rec.outcome.reason),
            turns: rec.plies.len() as i64,
            record: rec.to_json(),
            created_ms: now,
        };
        let mut rows = vec![
            row(&r1, (me, my_v, &my_sha), (&them, their_v, &their_sha)),
            row(&r2, (&them, their_v, &their_sha), (me, my_v, &my_sha)),
        ];
        rows[1].created_ms = now + 1;
        let write = ChallengeWrite {
            challenger_id: me.id,
            challenged_id: them.id,
            challenger_sha: my_sha.clone(),
            challenged_sha: their_sha.clone(),
            result: result_str(result).into(),
            scored,
            challenger_delta: st.a_delta,
            challenged_delta: st.b_delta,
            challenger_rp: st.a_rp,
            challenged_rp: st.b_rp,
            elo_delta: st.elo.a_delta,
            challenger_elo: st.elo.a,
            challenged_elo: st.elo.b,
            matches: rows.clone(),
        };
        let id = self.db.record_challenge(&write).await?;
        drop(_w);
        m.challenges
            .with_label_values(&[if scored { "scored" } else { "practice" }])
            .inc();
        let games: Vec<Value> = rows
            .iter()
            .zip([(Side::Black, res1), (Side::Red, res2)])
            .map(|(r, (side, res))| {
                json!({"urlId": r.url_id, "url": format!("/match/{}", r.url_id), "yourColour": colour(side),
                    "result": result_str(res), "winner": r.winner, "reason": r.reason, "turns": r.turns, "seed": r.seed})
            })
            .collect();
        Ok(json!({
            "challengeId": id, "result": result_str(result), "scored": scored,
            "scoredChallengesForPair": (before + scored as i64), "scoredLimit": SCORED_PER_PAIR,
            "rpBefore": me_now.rp, "rpDelta": st.a_delta, "rp": st.a_rp, "tier": tier_json(st.a_rp),
            "eloBefore": me_now.elo, "eloDelta": st.elo.a_delta, "elo": st.elo.a,
            "opponent": {"botId": them.id, "name": them.name, "rpBefore": them_now.rp, "rpDelta": st.b_delta,
                "rp": st.b_rp, "tier": tier_json(st.b_rp),
                "eloBefore": them_now.elo, "eloDelta": -st.elo.a_delta, "elo": st.elo.b},
            "matches": games,
        }))
    }
}

/// Both bots' RP and Elo after a challenge (A the challenger, B the challenged).
struct Standing {
    a_delta: i64,
    b_delta: i64,
    a_rp: i64,
    b_rp: i64,
    elo: elo::Update,
}

impl Standing {
    /// A scored challenge settles RP on the combined result and Elo on the game points; a
    /// practice one leaves both as they were.
    fn after(
        a: &PlayerRow,
        b: &PlayerRow,
        scored: bool,
        games: (PlayerResult, PlayerResult),
    ) -> Self {
        if !scored {
            return Standing {
                a_delta: 0,
                b_delta: 0,
                a_rp: a.rp,
                b_rp: b.rp,
                elo: elo::Update {
                    a_delta: 0,
                    a: a.elo,
                    b: b.elo,
                },
            };
        }
        let s = settle(
            a.rp.max(0) as u32,
            b.rp.max(0) as u32,
            combine(games.0, games.1),
        );
        Standing {
            a_delta: s.a_delta as i64,
            b_delta: s.b_delta as i64,
            a_rp: s.a_rp as i64,
            b_rp: s.b_rp as i64,
            elo: elo::update(a.elo, b.elo, games.0, games.1),
        }
    }
}
