"""echomq: a Python speaker of the EchoMQ wire (emq/1) over redis-py."""
from .connect import client_from_url
from .fleet import daemons
from .errors import (ArgError, EchoMQError, InvalidError, JobFailed, JobNotFound, KindError, WireError)
from .ids import check_job_id, check_queue_name, mint_job_id, minted_at_ms, valid_job_id, valid_queue_name
from .flows import FlowIncomplete
from .options import Enqueued
from .queue import Queue

__all__ = ["Queue", "Enqueued", "daemons", "client_from_url", "mint_job_id", "minted_at_ms", "valid_job_id",
           "valid_queue_name", "check_job_id", "check_queue_name", "EchoMQError", "InvalidError", "KindError", "ArgError", "WireError",
           "JobNotFound", "JobFailed", "FlowIncomplete"]
