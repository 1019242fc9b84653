"""Exceptions that end the whole run instead of becoming an error response.

Kafka's request handlers and background threads catch every Throwable: a bug or bad input is
logged and answered with an error code, and the broker keeps serving. Here the same catch-alls
are written ``except Exception``, which leaves ``KeyboardInterrupt`` and ``SystemExit`` alone
(they are not ``Exception`` subclasses) but would swallow ``bdb.BdbQuit``: pdb's ``q`` raises it
in the frame being debugged, and it derives from ``Exception``. A catch-all that swallowed it
would answer UNKNOWN_SERVER_ERROR and keep the cluster, and the virtual clock, running after the
learner quit the debugger.

So every catch-all in ``kafka_ref`` lets ``RUN_ENDING`` through first::

    except RUN_ENDING:
        raise
    except Exception as exc:
        ...

The exception then leaves the task, cancels the broker's task group and the cluster's, and
``Cluster.__aexit__`` re-raises it as itself.
"""

from __future__ import annotations

import bdb

#: Exception subclasses that stop the run (the BaseException-only ones pass catch-alls anyway).
RUN_ENDING: tuple[type[BaseException], ...] = (bdb.BdbQuit,)
