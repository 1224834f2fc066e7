"""`POST /api/verdicts`: verdicts from the dashboard when keys are required.

Verdicts from the dashboard go to `/bench/verdict` when the bench needs no keys (the caller is
`local`, as for any loopback caller); when keys are required the dashboard has none, so it posts
to `/api/verdicts`, guarded like every admin route, and the verdict's caller is the admin.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends
from starlette.responses import Response

from benchwarmers.bench.caller import Caller
from benchwarmers.server.deps import Admin, BenchDep, JsonBody, admin_router
from benchwarmers.server.responses import json_response
from benchwarmers.server.schemas import VerdictBody

router = admin_router()

VERDICT_CAP = 1024 * 1024


@router.post("/api/verdicts")
async def post_verdict(
    actor: Admin, bench: BenchDep, body: Annotated[VerdictBody, Depends(JsonBody(VerdictBody, VERDICT_CAP))]
) -> Response:
    return json_response(await bench.verdicts.record(body.model_dump(), Caller(name=actor)))
