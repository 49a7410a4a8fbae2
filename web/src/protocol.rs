//! The WebSocket messages: what a client may send ([`Request`]) and what the server answers
//! ([`Reply`]). Every message is one JSON object with a `type`; a client may add a numeric
//! `id`, which the server copies into its direct answer.

use crate::config::MAX_MESSAGE_BYTES;
use crate::state::{PositionView, TableView};
use serde::{Deserialize, Serialize};

/// A side as a client chooses it: South, North, or drawn at random by the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SideChoice {
    /// South, the near row, moves first.
    South,
    /// North, the far row, moves second.
    North,
    /// Drawn by the server.
    Random,
}

/// A move of a reviewed game that threw away a result the endgame tables prove: before it
/// the mover was sure of `from`, after it of no more than `to`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TableMark {
    /// The move's number, 1 for the first: the state after it is the review's `states[move]`.
    #[serde(rename = "move")]
    pub number: usize,
    /// The move's letter.
    pub letter: char,
    /// The result the position allowed its mover at least: `win` or `draw`.
    pub from: &'static str,
    /// The best result the move left its mover: `draw` or `loss`.
    pub to: &'static str,
}

/// What a client asks for.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Request {
    /// A new game against the AI with index `ai` of `/api/info`, the client sitting `side`.
    NewAi {
        /// Index into the offered AIs.
        ai: usize,
        /// The client's side.
        side: SideChoice,
    },
    /// A new game for two people on one device.
    NewLocal,
    /// A new friend room, the host sitting `side`.
    CreateRoom {
        /// The host's side.
        side: SideChoice,
    },
    /// Take the free seat of the room with this code.
    JoinRoom {
        /// The room code.
        code: String,
    },
    /// Watch the room with this code.
    Watch {
        /// The room code.
        code: String,
    },
    /// Return to the seat this secret token holds (after a reload or a dropped connection).
    Resume {
        /// The seat token from `joined`.
        token: String,
    },
    /// Leave the current table (a seat stays reserved for its token until the table expires).
    Leave,
    /// Sow from a house, `a`–`f` or `A`–`F`.
    Move {
        /// The house letter.
        house: String,
    },
    /// The AI's suggestion for the side to move, with its evaluation (not in rooms).
    Hint,
    /// Take back the last move; against the AI, your last move and its reply.
    Undo,
    /// Give up the game.
    Resign,
    /// Offer a draw (rooms).
    OfferDraw,
    /// Accept the opponent's draw offer.
    AcceptDraw,
    /// Decline the opponent's draw offer.
    DeclineDraw,
    /// A new game at the same table once this one is over (in rooms both players ask, and the
    /// sides are swapped).
    Rematch,
    /// Review a game record (the format `oware replay` reads): every state, then the
    /// evaluation after every move.
    Review {
        /// The record text; its first line with moves is used.
        record: String,
    },
    /// Keeps the connection alive; answered with `pong`.
    Ping,
}

/// A request and the id the client gave it.
#[derive(Debug, Deserialize)]
struct Envelope {
    #[serde(default)]
    id: Option<u64>,
    #[serde(flatten)]
    request: Request,
}

/// What went wrong with a request, as the `code` of an `error` reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// Not JSON, or not a known request with the right fields.
    BadMessage,
    /// Longer than the message limit.
    TooLarge,
    /// Too many messages, or too many unknown codes tried.
    RateLimited,
    /// The request needs a table and the connection has none.
    NoTable,
    /// No room with that code, or no seat with that token.
    NotFound,
    /// Both seats of the room are taken.
    RoomFull,
    /// A watcher tried to play.
    NotYourSeat,
    /// The other side is to move.
    NotYourTurn,
    /// The move breaks a rule (see `reason`).
    IllegalMove,
    /// The game is over.
    GameOver,
    /// Not possible at this table or at this moment (e.g. a hint in a room).
    NotAllowed,
    /// The search pool is full, or a search for this table is already running.
    Busy,
    /// The server holds as many rooms, games or connections as it may.
    Limit,
    /// The record to review is not a legal game.
    BadRecord,
    /// An AI search failed.
    AiFailed,
    /// The table expired after being idle.
    Expired,
}

/// Why a tap on a house was refused: the one-line reason the page shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RefusalReason {
    /// The house holds no seeds.
    EmptyHouse,
    /// The house is on the other row.
    OtherRow,
    /// The opponent's row is empty and this house does not reach it.
    MustFeed,
}

/// An error reply.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ErrorReply {
    /// What kind of error.
    pub code: ErrorCode,
    /// One line for people.
    pub message: String,
    /// For a refused move: why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<RefusalReason>,
}

impl ErrorReply {
    /// An error with a message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ErrorReply {
        ErrorReply {
            code,
            message: message.into(),
            reason: None,
        }
    }

    /// A refused move.
    pub fn refused(reason: RefusalReason, message: impl Into<String>) -> ErrorReply {
        ErrorReply {
            code: ErrorCode::IllegalMove,
            message: message.into(),
            reason: Some(reason),
        }
    }
}

/// The seat a connection holds at a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SeatName {
    /// South's seat.
    South,
    /// North's seat.
    North,
    /// Both seats (two people on one device).
    Both,
    /// A watcher.
    Watcher,
}

impl SeatName {
    /// The seat of one side.
    pub const fn from_side(side: oware_engine::Side) -> SeatName {
        match side {
            oware_engine::Side::South => SeatName::South,
            oware_engine::Side::North => SeatName::North,
        }
    }
}

/// What the server sends.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Reply {
    /// The connection sits at a table now.
    Joined {
        /// `ai`, `local` or `room`.
        kind: &'static str,
        /// The room code (rooms only).
        #[serde(skip_serializing_if = "Option::is_none")]
        code: Option<String>,
        /// The page's link to the room (rooms only).
        #[serde(skip_serializing_if = "Option::is_none")]
        link: Option<String>,
        /// The seat taken.
        seat: SeatName,
        /// The secret that holds the seat (`resume` with it); none for watchers.
        #[serde(skip_serializing_if = "Option::is_none")]
        token: Option<String>,
    },
    /// The whole state of the table, sent to everyone at it after every change.
    State(Box<TableView>),
    /// The AI's suggestion.
    Hint {
        /// The ply the hint is for.
        ply: u32,
        /// The suggested move.
        #[serde(rename = "move")]
        mv: char,
        /// The evaluation for the side to move, -1 (lost) to 1 (won).
        value: Option<f32>,
        /// The same from South's side.
        south_value: Option<f32>,
        /// The search's summary.
        info: String,
        /// The spec of the player that gave it.
        by: String,
    },
    /// Every state of a reviewed game.
    Review {
        /// The moves.
        moves: Vec<char>,
        /// The state before the first move and after each move (the states of
        /// `oware replay --json`).
        states: Vec<PositionView>,
        /// The record in the format `oware replay` reads.
        record: String,
    },
    /// The evaluation after every move of the last reviewed game.
    Analysis {
        /// The record analysed (moves only).
        moves: String,
        /// South's expected result (-1..1) in each state, the start included.
        evals: Vec<f32>,
        /// The state reached by the move with the biggest swing (the turning point).
        turning_point: Option<usize>,
        /// The spec of the evaluating player.
        by: String,
        /// The moves that threw away a result the endgame tables prove (`oware serve --egtb`;
        /// empty without tables), in game order.
        table_marks: Vec<TableMark>,
    },
    /// Something went wrong with a request.
    Error(ErrorReply),
    /// Something happened that is not a state change (an offer declined, the table expired).
    Notice {
        /// One line for people.
        text: String,
    },
    /// The answer to `ping`.
    Pong,
}

/// A reply and the id of the request it answers.
#[derive(Clone, Debug, Serialize)]
pub struct Outgoing {
    /// The request's id, when it had one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<u64>,
    /// The reply.
    #[serde(flatten)]
    pub reply: Reply,
}

impl Outgoing {
    /// A reply to the request with `id`.
    pub fn to(id: Option<u64>, reply: Reply) -> Outgoing {
        Outgoing { id, reply }
    }

    /// The JSON text.
    pub fn to_json(&self) -> String {
        // Serializing these types cannot fail: every key is a string and no value is a map
        // with other keys; an error here would be a bug in this file, shown as an error reply.
        serde_json::to_string(self).unwrap_or_else(|e| {
            format!(r#"{{"type":"error","code":"bad_message","message":"cannot encode: {e}"}}"#)
        })
    }
}

/// Parses one text message: the request and its id, or the error reply to send (with the id
/// when the text was JSON with a numeric `id`).
pub fn parse(text: &str) -> Result<(Option<u64>, Request), (Option<u64>, ErrorReply)> {
    if text.len() > MAX_MESSAGE_BYTES {
        return Err((
            None,
            ErrorReply::new(
                ErrorCode::TooLarge,
                format!(
                    "message of {} bytes is longer than the limit of {MAX_MESSAGE_BYTES}",
                    text.len()
                ),
            ),
        ));
    }
    match serde_json::from_str::<Envelope>(text) {
        Ok(e) => Ok((e.id, e.request)),
        Err(err) => {
            let id = serde_json::from_str::<serde_json::Value>(text)
                .ok()
                .and_then(|v| v.get("id").and_then(|id| id.as_u64()));
            Err((
                id,
                ErrorReply::new(ErrorCode::BadMessage, describe_parse_error(text, &err)),
            ))
        }
    }
}

/// A one-line description of why a text is not a request.
fn describe_parse_error(text: &str, err: &serde_json::Error) -> String {
    let value = match serde_json::from_str::<serde_json::Value>(text) {
        Ok(v) => v,
        Err(_) => return format!("not JSON: {err}"),
    };
    match value.get("type") {
        None if !value.is_object() => "a message must be a JSON object with a \"type\"".into(),
        None => "the message has no \"type\"".into(),
        Some(serde_json::Value::String(t)) => format!("bad '{}' message: {err}", clip(t)),
        Some(_) => "\"type\" must be a string".into(),
    }
}

/// At most 40 characters of a client's string, for error messages.
pub fn clip(s: &str) -> String {
    let mut out: String = s.chars().take(40).collect();
    if s.chars().nth(40).is_some() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_requests_with_and_without_ids() {
        let (id, r) = parse(r#"{"type":"move","house":"c","id":7}"#).expect("valid");
        assert_eq!(id, Some(7));
        assert_eq!(
            r,
            Request::Move {
                house: "c".to_string()
            }
        );
        let (id, r) = parse(r#"{"type":"ping"}"#).expect("valid");
        assert_eq!((id, r), (None, Request::Ping));
        let (_, r) = parse(r#"{"type":"new_ai","ai":1,"side":"random"}"#).expect("valid");
        assert_eq!(
            r,
            Request::NewAi {
                ai: 1,
                side: SideChoice::Random
            }
        );
    }

    #[test]
    fn bad_messages_are_described() {
        let cases = [
            ("", "not JSON"),
            ("[1,2]", "JSON object"),
            (r#"{"house":"c"}"#, "no \"type\""),
            (r#"{"type":3}"#, "must be a string"),
            (r#"{"type":"fly"}"#, "bad 'fly' message"),
            (r#"{"type":"move"}"#, "bad 'move' message"),
            (
                r#"{"type":"new_ai","ai":-1,"side":"south"}"#,
                "bad 'new_ai'",
            ),
        ];
        for (text, want) in cases {
            let (_, e) = parse(text).expect_err(text);
            assert_eq!(e.code, ErrorCode::BadMessage, "{text}");
            assert!(e.message.contains(want), "{text}: {}", e.message);
        }
        let (id, _) = parse(r#"{"type":"fly","id":12}"#).expect_err("unknown type");
        assert_eq!(id, Some(12));
        let long = format!(r#"{{"type":"review","record":"{}"}}"#, "a ".repeat(5000));
        let (_, e) = parse(&long).expect_err("too long");
        assert_eq!(e.code, ErrorCode::TooLarge);
    }

    #[test]
    fn replies_carry_their_type_and_id() {
        let out = Outgoing::to(Some(3), Reply::Pong).to_json();
        assert_eq!(out, r#"{"id":3,"type":"pong"}"#);
        let e = Outgoing::to(
            None,
            Reply::Error(ErrorReply::refused(RefusalReason::MustFeed, "feed")),
        )
        .to_json();
        assert_eq!(
            e,
            r#"{"type":"error","code":"illegal_move","message":"feed","reason":"must-feed"}"#
        );
    }
}
