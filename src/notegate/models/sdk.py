"""What the official SDK providers share: no SDK retries, quiet SDK loggers, and SDK errors as ModelErrors.

The anthropic and openai SDKs are generated from one template, so their error classes have the same names;
one translation serves both, and none of it carries a response body (it can echo prompts or data).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from notegate.models.base import ModelError, ModelTimeout

#: Retries inside the SDK.  Zero: the fallback chain decides what happens next.
SDK_MAX_RETRIES = 0
_ERROR_TYPE = re.compile(r"[a-z_]{1,64}\Z")


def quiet_sdk_loggers(*names: str) -> None:
    """Hold SDK loggers at WARNING: their DEBUG records include request bodies (prompts, data)."""
    for name in names:
        logging.getLogger(name).setLevel(logging.WARNING)


def status_message(status: int, body: Any) -> str:
    """``HTTP 529 (overloaded_error)``: the status and, if well-formed, the error type; never the body text."""
    kind = None
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict):
            kind = err.get("type") or err.get("code")
    if isinstance(kind, str) and _ERROR_TYPE.match(kind):
        return f"the server answered HTTP {status} ({kind})"
    return f"the server answered HTTP {status}"


@contextmanager
def sdk_errors(sdk: Any, base_error: type[Exception], *, provider: str, timeout: float) -> Iterator[None]:
    """Turn the SDK's exceptions into the chain's: a timeout, an HTTP status, no connection, anything else."""
    try:
        yield
    except sdk.APITimeoutError:
        raise ModelTimeout(f"no answer within {timeout:g} s", provider=provider) from None
    except sdk.APIStatusError as exc:
        raise ModelError(status_message(exc.status_code, exc.body), provider=provider) from None
    except sdk.APIConnectionError:
        raise ModelError("could not connect to the server", provider=provider) from None
    except base_error as exc:  # response validation and other SDK-level failures
        raise ModelError(f"the SDK failed ({type(exc).__name__})", provider=provider) from None
