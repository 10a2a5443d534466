"""The ray executor when a whole node dies mid-run (a real two-node Ray cluster on this machine)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from fixtures_ws import recipe_version
from test_executor_ray import make_ray_repo, run_pids, wait_for

from evotree.core.workspace import Workspace
from evotree.gates.runs import run_versions

pytest.importorskip("ray")


@pytest.mark.slow
def test_node_dying_mid_run_fails_the_attempt_and_the_retry_runs_on_another_node(
    tmp_path: Path,
) -> None:
    import ray
    from ray.cluster_utils import Cluster

    cluster = Cluster(
        initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False}
    )
    doomed = cluster.add_node(num_cpus=1)
    ray.init(address=cluster.address, log_to_driver=False)
    try:
        block = tmp_path / "block"
        block.write_text("hold")
        ws = Workspace.open(
            make_ray_repo(tmp_path / "w", executor="max_retries = 1\nsync_seconds = 0.2")
        )
        v1 = recipe_version(ws, f'skill = 0.4\nsteps = 2\nblock = "{block}"\n')
        store = ws.root / ".evotree" / "store" / "runs"
        result: dict[str, Any] = {}
        thread = threading.Thread(target=lambda: result.update(records=run_versions(ws, [v1])))
        thread.start()
        try:
            first = wait_for(
                lambda: next(iter(store.glob("*/worker.json")), None), 90, "the worker"
            )
            wait_for(lambda: run_pids(first.parent.name), 30, "the train phase")
            cluster.add_node(num_cpus=1)  # where the retry can go
            cluster.remove_node(doomed)  # the node running the task dies
            wait_for(
                lambda: (store / f"{first.parent.name}-r1" / "worker.json").exists(),
                90,
                "the retry",
            )
            time.sleep(0.5)
        finally:
            block.unlink(missing_ok=True)
            thread.join(timeout=120)
        failed, retried = result["records"]
        assert failed.status == "failed" and "worker running this run died" in failed.error, (
            failed.error
        )
        assert failed.evidence.get("complete") is False and failed.headline is None
        assert (
            retried.status == "succeeded"
            and retried.executor["node_id"] != failed.executor["node_id"]
        )
        assert retried.headline["value"] == pytest.approx(0.4)
    finally:
        ray.shutdown()
        cluster.shutdown()
