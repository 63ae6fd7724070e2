//! The referee loop: one Bomberman match driven with live bot processes. It owns the turn
//! sequence (INIT + TURN text out, one answer line back per living bot), turns bot misbehaviour
//! into classified faults the engine eliminates per the rules, records the replay, and makes
//! sure every process of the match is gone when it returns. A failure the host caused (a bot
//! that cannot start because of the sandbox or the scratch mount, the host's OOM killer) is
//! never recorded as a bot's fault: `play` returns [`RefereeError::Host`] and the job fails as
//! an infrastructure problem, to be retried elsewhere.

use std::collections::BTreeMap;
use std::time::Duration;

use games::bomberman::replay::{turn_timing, MapSource, MatchMeta, Recorder, Replay, TurnInput};
use games::bomberman::{self as bm, Bank, Charge, ClockSpec, Game, Input, Map, Params};
use sandbox::{Bot, BotCommand, CoreTokens, SandboxConfig, SpawnError};
use shared::{Fault, FaultKind};

/// Answer deadlines, as RULES.md sets them.
#[derive(Debug, Clone, Copy)]
pub struct Deadlines {
    /// Turn 0 (INIT + the first TURN): start-up is not counted, thinking is.
    pub first: Duration,
    /// Every later turn.
    pub turn: Duration,
}

impl Default for Deadlines {
    fn default() -> Self {
        Deadlines::of(&ClockSpec::default())
    }
}

impl Deadlines {
    /// The per-turn limits of a match clock (the rules' by default; a tournament may ask for a
    /// longer per-turn one, which travels in its jobs).
    pub fn of(clock: &ClockSpec) -> Deadlines {
        Deadlines {
            first: Duration::from_millis(clock.first_ms()),
            turn: Duration::from_millis(clock.turn_ms),
        }
    }

    fn of_turn(&self, t: u32) -> Duration {
        if t == 0 {
            self.first
        } else {
            self.turn
        }
    }
}

/// One exchange whose excess over `limit` the bot's bank pays: the bot may run on to its limit
/// plus what the bank holds; the charge is recorded (the replay's clock) and a timeout says
/// that the bank is spent.
fn banked_exchange(
    bot: &mut Bot,
    bank: &mut Bank,
    recorder: &mut Recorder,
    p: usize,
    t: u32,
    input: &[u8],
    limit: Duration,
) -> Result<Vec<u8>, Fault> {
    let limit_us = limit.as_micros() as u64;
    let before = bank.left_us();
    let allowance = Duration::from_micros(bank.allowance_us(limit_us));
    let answer = bot.exchange_within(t, input, limit, allowance);
    let used_us = bot.last_charge().as_micros() as u64;
    let charge = bank.charge(limit_us, used_us);
    recorder.record_time(p, t, used_us, bank.left_us());
    match answer {
        Err(mut f) if f.kind == FaultKind::Timeout => {
            debug_assert_eq!(charge, Charge::Exhausted);
            f.detail.push_str(&format!(
                "; its {} ms turn limit plus the {:.1} ms left in its time bank",
                limit.as_millis(),
                before as f64 / 1000.0
            ));
            Err(f)
        }
        other => other,
    }
}

/// One seat of the match.
pub struct Seat {
    pub name: String,
    /// sha256 of the program as the operator gave it (recorded as `bot_i` in the result).
    pub hash: String,
    /// The runnable bot, or the fault that kept it from existing (e.g. a compile failure).
    pub program: Result<BotCommand, Fault>,
}

/// Which board to play on.
pub enum MapChoice {
    /// Generated from (seed, player count).
    Generated,
    /// A hand-made board (spawn count must equal the number of seats).
    Given(Map),
}

/// Everything that defines one match.
pub struct MatchSpec {
    pub seed: u64,
    pub seats: Vec<Seat>,
    pub map: MapChoice,
}

/// A match that could not be set up at all (bad input, not bot misbehaviour).
#[derive(Debug, thiserror::Error)]
pub enum RefereeError {
    #[error("invalid match: {0}")]
    Params(#[from] bm::ParamsError),
    #[error("the map has {spawns} spawns but the match has {seats} bots")]
    SpawnCount { spawns: usize, seats: usize },
    #[error("engine refused the match: {0}")]
    Engine(String),
    /// The host, not a bot, made the match impossible: never score it.
    #[error("host problem with seat {seat} ({name}): {detail}")]
    Host {
        seat: usize,
        name: String,
        detail: String,
    },
}

impl RefereeError {
    /// True when the host is to blame (retry elsewhere), false for an invalid match.
    pub fn is_host(&self) -> bool {
        matches!(self, RefereeError::Host { .. })
    }
}

/// Play one match to the end under the rules' clock and return its replay (result included).
/// Bots that fail to start, time out, crash or misbehave are eliminated per the rules; the
/// match goes on without them.
pub fn play(
    spec: MatchSpec,
    cfg: &SandboxConfig,
    tokens: &CoreTokens,
) -> Result<Replay, RefereeError> {
    play_clocked(spec, cfg, tokens, ClockSpec::default())
}

/// [`play`] under a given clock: its per-turn limit and, when `clock.bank_ms > 0`, a time bank
/// per bot that pays for turns past the limit (recorded in the replay, which `verify` checks).
pub fn play_clocked(
    spec: MatchSpec,
    cfg: &SandboxConfig,
    tokens: &CoreTokens,
    clock: ClockSpec,
) -> Result<Replay, RefereeError> {
    let bank = (clock.bank_ms > 0).then_some(clock);
    run(spec, cfg, tokens, Deadlines::of(&clock), bank, None)
}

/// [`play_clocked`] under a clock stated for a reference speed, scaled to this host's: played
/// under `scaling.played()`, with the scaling recorded in the replay.
pub fn play_scaled(
    spec: MatchSpec,
    cfg: &SandboxConfig,
    tokens: &CoreTokens,
    scaling: bm::Scaling,
) -> Result<Replay, RefereeError> {
    let clock = scaling
        .played()
        .map_err(|e| RefereeError::Engine(e.to_string()))?;
    let bank = (clock.bank_ms > 0).then_some(clock);
    run(
        spec,
        cfg,
        tokens,
        Deadlines::of(&clock),
        bank,
        Some(scaling),
    )
}

/// [`play`] with explicit deadlines and no time bank (tests use long ones to stay
/// deterministic under load).
pub fn play_with(
    spec: MatchSpec,
    cfg: &SandboxConfig,
    tokens: &CoreTokens,
    deadlines: Deadlines,
) -> Result<Replay, RefereeError> {
    run(spec, cfg, tokens, deadlines, None, None)
}

fn run(
    spec: MatchSpec,
    cfg: &SandboxConfig,
    tokens: &CoreTokens,
    deadlines: Deadlines,
    bank: Option<ClockSpec>,
    scaling: Option<bm::Scaling>,
) -> Result<Replay, RefereeError> {
    let n = spec.seats.len();
    let (mut game, mut recorder) = new_game(&spec)?;
    if let Some(clock) = &bank {
        recorder.set_clock(*clock);
    }
    if let Some(s) = scaling {
        recorder.set_scaling(s);
    }
    // Start every bot before the first turn; start-up time is nobody's turn time.
    let mut seats = Seats::start(&spec, cfg, tokens, bank)?;
    let mut text = String::with_capacity(4096);
    let mut inputs: Vec<Input> = Vec::with_capacity(n);
    let mut recorded: Vec<TurnInput> = Vec::with_capacity(n);
    while !game.is_over() {
        let t = game.turn();
        text.clear();
        game.write_turn(&mut text);
        inputs.clear();
        recorded.clear();
        for p in 0..n {
            let (input, record) = seats.ask(&spec, &game, &mut recorder, &deadlines, &text, p)?;
            inputs.push(input);
            recorded.push(record);
        }
        game.step(&inputs);
        recorder.record(t, &recorded, game.digest());
        // Bots that died by the rules this turn get no more input: stop them now.
        for p in 0..n {
            if !game.is_alive(p) {
                seats.stop(p);
            }
        }
    }
    let (stderr_tails, timing) = seats.finish();
    Ok(recorder.finish(&game, stderr_tails, Some(timing)))
}

/// The engine and the replay recorder of a match, on its generated or given board.
fn new_game(spec: &MatchSpec) -> Result<(Game, Recorder), RefereeError> {
    let n = spec.seats.len();
    let mut params = Params::for_players(n)?;
    let (map, source) = match &spec.map {
        MapChoice::Generated => (bm::generate_map(spec.seed, n)?, MapSource::Generated),
        // A hand-made board keeps its own size; turn limits and shrink come from the count.
        MapChoice::Given(m) => {
            params.side = m.side;
            (m.clone(), MapSource::File)
        }
    };
    if map.spawns.len() != n {
        return Err(RefereeError::SpawnCount {
            spawns: map.spawns.len(),
            seats: n,
        });
    }
    let game = Game::new(params, &map).map_err(|e| RefereeError::Engine(e.to_string()))?;
    let names: Vec<String> = spec.seats.iter().map(|s| s.name.clone()).collect();
    let hashes: BTreeMap<String, String> = spec
        .seats
        .iter()
        .enumerate()
        .map(|(i, s)| (format!("bot_{i}"), s.hash.clone()))
        .collect();
    let meta = MatchMeta {
        seed: spec.seed,
        names,
        hashes,
        map_source: source,
    };
    let recorder = Recorder::new(meta, params, &map);
    Ok((game, recorder))
}

/// The match's bots, seat by seat: the running process, a fault waiting to be recorded at the
/// first turn (a bot that could not start), the time bank, and the report of a stopped bot.
struct Seats {
    bots: Vec<Option<Bot>>,
    pending: Vec<Option<Fault>>,
    banks: Vec<Option<Bank>>,
    reports: Vec<Option<sandbox::BotReport>>,
}

impl Seats {
    /// Start every seat's bot; a host failure stops the match (the bots already started are
    /// torn down as they drop).
    fn start(
        spec: &MatchSpec,
        cfg: &SandboxConfig,
        tokens: &CoreTokens,
        bank: Option<ClockSpec>,
    ) -> Result<Seats, RefereeError> {
        let n = spec.seats.len();
        let mut seats = Seats {
            bots: Vec::with_capacity(n),
            pending: Vec::with_capacity(n),
            banks: (0..n).map(|_| bank.as_ref().map(Bank::new)).collect(),
            reports: (0..n).map(|_| None).collect(),
        };
        for (slot, seat) in spec.seats.iter().enumerate() {
            let started = match &seat.program {
                Ok(cmd) => Bot::spawn(cmd, cfg, tokens, slot),
                Err(f) => Err(SpawnError::Bot(f.clone())),
            };
            match started {
                Ok(bot) => {
                    seats.bots.push(Some(bot));
                    seats.pending.push(None);
                }
                Err(SpawnError::Bot(f)) => {
                    seats.bots.push(None);
                    seats.pending.push(Some(f));
                }
                Err(e @ SpawnError::Host { .. }) => {
                    return Err(RefereeError::Host {
                        seat: slot,
                        name: seat.name.clone(),
                        detail: e.to_string(),
                    });
                }
            }
        }
        Ok(seats)
    }

    /// Seat `p`'s input to this turn and what the replay records of it: its action, or the
    /// fault that eliminates it now (its processes are stopped at once). A failure the host
    /// caused ends the match as the host's.
    fn ask(
        &mut self,
        spec: &MatchSpec,
        game: &Game,
        recorder: &mut Recorder,
        deadlines: &Deadlines,
        text: &str,
        p: usize,
    ) -> Result<(Input, TurnInput), RefereeError> {
        let t = game.turn();
        if !game.is_alive(p) {
            return Ok((Input::Fault, TurnInput::NotAsked));
        }
        if let Some(mut f) = self.pending[p].take() {
            f.turn = t;
            return Ok((Input::Fault, TurnInput::Fault(f)));
        }
        let Some(bot) = self.bots[p].as_mut() else {
            // A bot that faulted earlier is dead in the engine; never reached.
            return Ok((Input::Fault, TurnInput::NotAsked));
        };
        let payload = if t == 0 {
            let mut s = game.init_line(p);
            s.push_str(text);
            std::borrow::Cow::Owned(s)
        } else {
            std::borrow::Cow::Borrowed(text)
        };
        let limit = deadlines.of_turn(t);
        let answer = match self.banks[p].as_mut() {
            None => bot.exchange(t, payload.as_bytes(), limit),
            Some(b) => banked_exchange(bot, b, recorder, p, t, payload.as_bytes(), limit),
        };
        let verdict = answer.and_then(|line| {
            bm::parse_answer(&line, t).map_err(|e| Fault {
                kind: FaultKind::BadOutput,
                turn: t,
                detail: e.to_string(),
            })
        });
        match verdict {
            Ok(action) => Ok((Input::Act(action), TurnInput::Act(action))),
            Err(f) => {
                if let Some(why) = bot.host_failure() {
                    return Err(RefereeError::Host {
                        seat: p,
                        name: spec.seats[p].name.clone(),
                        detail: format!("{why} (recorded as {} by the bot)", f.kind.as_str()),
                    });
                }
                // Eliminated this turn: stop its processes now, keep what the replay needs.
                self.stop(p);
                Ok((Input::Fault, TurnInput::Fault(f)))
            }
        }
    }

    /// Stop seat `p`'s bot if it runs, keeping its report.
    fn stop(&mut self, p: usize) {
        if let Some(b) = self.bots[p].take() {
            self.reports[p] = Some(b.finish());
        }
    }

    /// Stop every bot; their stderr tails and per-turn timing, by seat, for the replay (the
    /// turns as value lists, [`turn_timing::columnar`]).
    fn finish(mut self) -> (Vec<String>, serde_json::Value) {
        // Kill them all first: their exits overlap while each is reaped and checked in turn.
        for b in self.bots.iter().flatten() {
            b.kill();
        }
        for p in 0..self.bots.len() {
            self.stop(p);
        }
        let mut stderr_tails = Vec::with_capacity(self.reports.len());
        let mut timing = serde_json::Map::new();
        for (p, r) in self.reports.into_iter().enumerate() {
            let Some(r) = r else {
                stderr_tails.push(String::new());
                continue;
            };
            if !r.leftovers.is_empty() {
                tracing::error!(bot = p, leftovers = ?r.leftovers, "processes or files left after a bot finished");
            }
            stderr_tails.push(r.stderr_tail);
            timing.insert(
                format!("bot_{p}"),
                serde_json::to_value(&r.timing).unwrap_or(serde_json::Value::Null),
            );
        }
        let timing = turn_timing::columnar(serde_json::Value::Object(timing));
        (stderr_tails, timing)
    }
}
