//! Replays: what the worker records turn by turn (inputs with fault details, state digests), the
//! JSON document with its content digest, and what is derived from it by re-simulation
//! (verification, viewer data, text inspection).

mod inspect;
mod result;
pub mod turn_timing;
mod verify;
mod viewer_data;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use shared::{Fault, FaultKind};

use super::action::{Action, Input};
use super::clock::{ClockRecord, ClockSpec, ClockTurn};
use super::game::Game;
use super::map::Map;
use super::params::Params;
use super::scaled_clock::Scaling;

pub use inspect::{inspect, InspectError};
pub use result::{build_result, timing_summary, MatchResult};
pub use verify::{verify, VerifyError};
pub use viewer_data::viewer_data;
pub(crate) use viewer_data::{meta_json, play_frames, played_turns};

/// The `format` tag of a replay document.
pub const REPLAY_FORMAT: &str = "matchfarm-bomberman-replay";

/// Where the map came from: regenerated from the seed (and checked on verify) or a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MapSource {
    Generated,
    File,
}

/// Who played and on what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchMeta {
    pub seed: u64,
    pub names: Vec<String>,
    /// `bot_<seat>` -> sha256 hex of the bot's program.
    pub hashes: BTreeMap<String, String>,
    pub map_source: MapSource,
}

/// What one player contributed to one turn, as the referee saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnInput {
    Act(Action),
    /// A protocol fault: the player dies in phase 1 of this turn.
    Fault(Fault),
    /// Not asked (already dead).
    NotAsked,
}

impl TurnInput {
    /// The engine's input (dead players' inputs are ignored by the engine).
    pub fn to_input(&self) -> Input {
        match self {
            TurnInput::Act(a) => Input::Act(*a),
            TurnInput::Fault(_) | TurnInput::NotAsked => Input::Fault,
        }
    }
}

/// A fault as stored in a turn record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TurnFault {
    pub player: usize,
    pub kind: FaultKind,
    pub turn: u32,
    pub detail: String,
}

impl TurnFault {
    pub fn to_fault(&self) -> Fault {
        Fault {
            kind: self.kind,
            turn: self.turn,
            detail: self.detail.clone(),
        }
    }
}

/// One turn of a replay.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TurnRecord {
    pub t: u32,
    /// Per player: compact action ("U1", "S0") or null (dead, not asked, or faulted).
    pub actions: Vec<Option<String>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<TurnFault>,
    /// The engine's state digest after this turn, 16 hex digits.
    pub digest: String,
}

/// The map as stored: plain rows, spawns, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplayMap {
    pub source: MapSource,
    pub rows: Vec<String>,
    pub spawns: Vec<[u16; 2]>,
}

/// A whole match: enough to re-simulate every turn and re-derive the result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Replay {
    pub format: String,
    pub version: String,
    pub seed: u64,
    pub players: usize,
    pub names: Vec<String>,
    pub hashes: BTreeMap<String, String>,
    pub params: Params,
    pub map: ReplayMap,
    pub turns: Vec<TurnRecord>,
    pub stderr_tails: Vec<String>,
    /// The clock, when the match had a time bank: its limits and every bot-turn's charged time
    /// and bank left (absent without a bank, so such replays are as before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<ClockRecord>,
    /// How the clock was scaled to the host's speed, when the tournament asked for it: the
    /// stated clock, the reference speed and the host's (absent otherwise, as before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scaling: Option<Scaling>,
    pub result: MatchResult,
    /// sha256 (hex) of the canonical JSON of everything above.
    #[serde(default)]
    pub digest: String,
}

impl ReplayMap {
    pub fn from_map(map: &Map, source: MapSource) -> ReplayMap {
        ReplayMap {
            source,
            rows: map.rows(),
            spawns: map.spawns.iter().map(|&(x, y)| [x, y]).collect(),
        }
    }
}

impl Replay {
    /// The replay document (compact JSON, the content digest last).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The result object as JSON (what tournaments store and `farm play` prints).
    pub fn result_json(&self) -> Value {
        serde_json::to_value(&self.result).unwrap_or(Value::Null)
    }

    /// The result object as a tournament's result row keeps it: per-bot timing summed up
    /// ([`timing_summary`]), the per-turn times only in the replay itself.
    pub fn row_result_json(&self) -> Value {
        self.result.row_json()
    }

    /// sha256 hex of the canonical JSON without the `digest` member.
    pub fn content_digest(&self) -> String {
        content_digest_of(&serde_json::to_value(self).unwrap_or(Value::Null))
    }

    /// The map this replay was played on (rows and spawns as stored).
    pub fn map(&self) -> Result<Map, super::map::MapError> {
        let spawns: Vec<(u16, u16)> = self.map.spawns.iter().map(|&[x, y]| (x, y)).collect();
        Map::from_rows(&self.map.rows, &spawns)
    }
}

/// sha256 hex of a replay document's compact JSON without its `digest` member, members in
/// document order. Verification hashes the document as read, so that any added, removed or
/// changed member anywhere is caught, including ones the typed form would ignore.
pub fn content_digest_of(document: &Value) -> String {
    let mut v = document.clone();
    if let Some(o) = v.as_object_mut() {
        o.shift_remove("digest");
    }
    shared::manifest::sha256_hex(v.to_string().as_bytes())
}

/// Collects a match turn by turn for the worker's referee loop.
#[derive(Debug, Clone)]
pub struct Recorder {
    meta: MatchMeta,
    params: Params,
    map: ReplayMap,
    turns: Vec<TurnRecord>,
    faults: Vec<Vec<Fault>>,
    clock: Option<ClockRecord>,
    scaling: Option<Scaling>,
}

impl Recorder {
    pub fn new(meta: MatchMeta, params: Params, map: &Map) -> Recorder {
        let n = params.players;
        Recorder {
            map: ReplayMap::from_map(map, meta.map_source),
            meta,
            params,
            turns: Vec::new(),
            faults: vec![Vec::new(); n],
            clock: None,
            scaling: None,
        }
    }

    /// Record the clock of this match. Only a match with a time bank keeps a clock record;
    /// without one the replay is exactly as it always was.
    pub fn set_clock(&mut self, spec: ClockSpec) {
        self.clock = (spec.bank_ms > 0).then(|| ClockRecord::new(spec, self.params.players));
    }

    /// Record that the clock was scaled to this host's speed (the limits played are
    /// `scaling.played()`, which [`Recorder::set_clock`] is given).
    pub fn set_scaling(&mut self, scaling: Scaling) {
        self.scaling = Some(scaling);
    }

    /// Record what turn `turn` charged `player` and its bank after it (no-op without a bank).
    pub fn record_time(&mut self, player: usize, turn: u32, used_us: u64, bank_us: u64) {
        if let Some(list) = self.clock.as_mut().and_then(|c| c.turns.get_mut(player)) {
            list.push(ClockTurn {
                t: turn,
                used_us,
                bank_us,
            });
        }
    }

    /// Records turn `turn`: one input per player and the engine's digest after the step.
    pub fn record(&mut self, turn: u32, inputs: &[TurnInput], digest: u64) {
        let mut faults = Vec::new();
        let actions = inputs
            .iter()
            .enumerate()
            .map(|(p, i)| match i {
                TurnInput::Act(a) => Some(a.compact()),
                TurnInput::Fault(f) => {
                    faults.push(TurnFault {
                        player: p,
                        kind: f.kind,
                        turn: f.turn,
                        detail: f.detail.clone(),
                    });
                    if let Some(list) = self.faults.get_mut(p) {
                        list.push(f.clone());
                    }
                    None
                }
                TurnInput::NotAsked => None,
            })
            .collect();
        self.turns.push(TurnRecord {
            t: turn,
            actions,
            faults,
            digest: format!("{digest:016x}"),
        });
    }

    /// The finished replay, with its result and content digest.
    pub fn finish(self, game: &Game, stderr_tails: Vec<String>, timing: Option<Value>) -> Replay {
        let mut result = build_result(
            self.meta.seed,
            &self.meta.names,
            &self.meta.hashes,
            self.meta.map_source,
            &game.outcome(),
            &self.faults,
        );
        result.timing = timing;
        let mut replay = Replay {
            format: REPLAY_FORMAT.to_string(),
            version: super::VERSION.to_string(),
            seed: self.meta.seed,
            players: self.params.players,
            names: self.meta.names,
            hashes: self.meta.hashes,
            params: self.params,
            map: self.map,
            turns: self.turns,
            stderr_tails,
            clock: self.clock,
            scaling: self.scaling,
            result,
            digest: String::new(),
        };
        replay.digest = replay.content_digest();
        replay
    }
}
