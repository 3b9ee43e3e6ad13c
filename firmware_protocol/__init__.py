"""The shoed shoe protocol: messages, reference codec and test vectors (see SPEC.md).

Shoe firmware implements SPEC.md; the daemon's native driver and the virtual
shoe use this package. Everything here is pure: no I/O, no clock.
"""

from firmware_protocol import messages
from firmware_protocol.codec import (
    MAX_ENCODED,
    MAX_FRAME,
    MAX_WIRE,
    MIN_FRAME,
    NEED_MORE,
    Decoder,
    EncodeError,
    Rejected,
    decode,
    encode,
    from_json,
    to_json,
)
from firmware_protocol.messages import (
    MESSAGE_NAMES,
    MESSAGE_TYPES,
    PROTOCOL_MAJOR,
    PROTOCOL_MINOR,
    Ack,
    Alarm,
    Button,
    CardRead,
    CutCard,
    Gate,
    Heartbeat,
    Hello,
    Message,
    SetTime,
    ShoeInserted,
    ShoeRemoved,
    Status,
    StatusRequest,
    Tamper,
    Unreadable,
    card_text,
)

__all__ = [
    "MAX_ENCODED", "MAX_FRAME", "MAX_WIRE", "MIN_FRAME", "NEED_MORE", "Decoder", "EncodeError", "Rejected",
    "decode", "encode", "from_json", "to_json", "messages",
    "MESSAGE_NAMES", "MESSAGE_TYPES", "PROTOCOL_MAJOR", "PROTOCOL_MINOR",
    "Ack", "Alarm", "Button", "CardRead", "CutCard", "Gate", "Heartbeat", "Hello", "Message", "SetTime",
    "ShoeInserted", "ShoeRemoved", "Status", "StatusRequest", "Tamper", "Unreadable", "card_text",
]
