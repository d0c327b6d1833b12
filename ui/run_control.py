"""The run button shared by every method page: the run happens in a background thread, the page follows
its progress, and a Cancel button stops it at the next progress report (`xcore.runtime.BackgroundJob`).

Why a thread: Streamlit reruns the script on every click, which used to abort a run computed in the
script itself (silently, with nothing kept). Now the job lives in the browser session; each rerun
picks it up again and polls it, so a click elsewhere does not lose it, and Cancel is a real stop.
"""

from __future__ import annotations

import streamlit as st

from xcore.data import RelationalDataset
from xcore.errors import XcoreError, wrap_foreign
from xcore.methods import REGISTRY, Run, Settings, run_key, run_method
from xcore.methods.session_runs import MAX_UNPINNED_RUNS, SessionRuns
from xcore.runtime import BackgroundJob

SESSION_RUNS = "_runs"
SESSION_JOBS = "_jobs"
SESSION_INTERRUPTED = "_interrupted"
"""Run-button keys whose latest run was cancelled or failed: they keep showing the previous results."""
MAX_SESSION_RUNS = MAX_UNPINNED_RUNS
POLL_SECONDS = 0.25


def session_runs() -> SessionRuns:
    """This browser session's runs by run key (bounded unpinned runs, least recently used dropped first,
    named when dropped; pinned runs kept)."""
    runs = st.session_state.get(SESSION_RUNS)
    if not isinstance(runs, SessionRuns):
        st.session_state[SESSION_RUNS] = SessionRuns.of(runs or {}, MAX_SESSION_RUNS)
    return st.session_state[SESSION_RUNS]


def remember_run(run: Run, key: tuple[str, str, str]) -> None:
    session_runs().put(key, run)


def replace_run(run: Run, dataset: RelationalDataset) -> None:
    """Keep `run` as this session's run of its method on `dataset` under its settings (a hand-edited model
    in place of the searched one)."""
    remember_run(run, run_key(run.method, dataset, run.settings))


def current_run(method: str, dataset: RelationalDataset, settings: Settings | None) -> Run | None:
    """This session's run of `method` on exactly this data and these settings, if there is one."""
    if settings is None:
        return None
    return session_runs().get(run_key(method, dataset, settings))


def show_error(error: BaseException, what: str) -> None:
    """An error in words, shown open (never a traceback)."""
    st.error(f"{what} failed: {wrap_foreign(error, what)}" if not isinstance(error, XcoreError)
             else f"{what} failed: {error}")


def session_jobs() -> dict[str, BackgroundJob]:
    """This browser session's running (or just finished, not yet shown) jobs by run-button key."""
    return st.session_state.setdefault(SESSION_JOBS, {})


def run_button(method: str, dataset: RelationalDataset, settings: Settings | None, label: str = "Run",
               key: str = "run", disabled: bool = False, force: bool = False) -> Run | None:
    """A primary button that runs `method` in the background with progress and a Cancel button.

    Returns the session's run for the current data and settings (None until one exists); after a
    cancelled or failed run, the previous run on this data stays shown (with a caption) until a run
    succeeds. A repeat with the same data and settings is served from the run cache. A click while a
    run for other settings is going stops that run and starts this one (a click for the same
    settings keeps following it). `force` starts a run without a click (a demo button that has just
    switched data and settings).
    """
    jobs = session_jobs()
    job = jobs.get(key)
    busy = job is not None and not job.done
    # never disabled while busy: a button drawn disabled would stay so after the run ends in this pass
    clicked = st.button(label, type="primary", key=key, disabled=disabled or settings is None)
    # One container on every pass, whatever it holds: the elements below keep their place in the page,
    # so Streamlit does not redraw them as new ones (an open tab stays open on the pass after a run).
    with st.container():
        if (clicked or force) and settings is not None:
            wanted = run_key(method, dataset, settings)
            if busy and job.tag != wanted:  # a run for other data or settings: stop it, then start this one
                stop_job(job, REGISTRY[method].title)
                busy = False
            if not busy:
                job = BackgroundJob(lambda progress: run_method(method, dataset, settings, progress=progress),
                                    name=f"xcore-{method}", tag=wanted)
                jobs[key] = job
        if job is not None:
            follow(job, REGISTRY[method].title, key)
        run = current_run(method, dataset, settings)
        if run is None and key in st.session_state.get(SESSION_INTERRUPTED, set()):
            run = last_run(method, dataset)
            if run is not None:
                st.caption("Shown below: the previous run on this data (the last one did not finish); its "
                           "settings may differ from the form's.")
        if run is not None:
            pin_box(run, key)
    return run


def pin_box(run: Run, key: str) -> None:
    """A checkbox pinning the shown run (kept beyond the session's bound), and which runs were dropped."""
    runs = session_runs()
    rkey = next((k for k in runs if runs[k] is run), None)
    if rkey is None:
        return
    pinned = st.checkbox("Pin this run (keep it in Compare and Study)", value=runs.is_pinned(rkey),
                         key=f"{key}_pin_{rkey[1][:8]}_{rkey[2][:8]}", help=runs.limit_text())
    runs.pin(rkey, pinned)
    notice = runs.dropped_notice(recent_only=True)
    if notice:
        st.warning(notice, icon=":material/delete_sweep:")


def last_run(method: str, dataset: RelationalDataset) -> Run | None:
    """This session's most recent run of `method` on this data (any settings)."""
    fp = dataset.fingerprint()
    runs = session_runs()
    for m, f, k in reversed(runs):
        if m == method and f == fp:
            return runs[(m, f, k)]
    return None


def stop_job(job: BackgroundJob, title: str) -> None:
    """Cancel a running job and wait until it has stopped (at its next progress report)."""
    job.cancel()
    with st.spinner(f"Stopping the running {title} run first…"):
        job.wait()


def follow(job: BackgroundJob, title: str, key: str) -> None:
    """Draw the job's progress until it ends (Cancel stops it), then keep its run or say why not."""
    with st.status(f"{title}: running…", expanded=True) as status:
        if st.button("Cancel", key=f"{key}_cancel", icon=":material/stop:", disabled=job.done,
                     help="Stop this run at its next progress report; earlier results stay."):
            job.cancel()
        bar = st.progress(job.fraction, text=job.message)
        while not job.wait(POLL_SECONDS):
            text = "cancelling…" if job.cancel_requested else job.message
            bar.progress(job.fraction, text=text)  # also where Streamlit stops this pass on a click
        session_jobs().pop(key, None)
        interrupted = st.session_state.setdefault(SESSION_INTERRUPTED, set())
        (interrupted.discard if job.error is None else interrupted.add)(key)
        if job.error is None:
            remember_run(job.result, job.tag)
            status.update(label=f"{title}: done in {job.seconds:.1f} s", state="complete", expanded=False)
        elif job.cancelled:
            status.update(label=f"{title}: cancelled", state="error", expanded=False)
        else:
            status.update(label=f"{title}: failed", state="error", expanded=True)
    if job.cancelled:
        st.info(f"{title} was cancelled after {job.seconds:.1f} s ({job.error}). Nothing from it was kept; "
                "earlier results are unchanged. Press the run button to start again.", icon=":material/block:")
    elif job.error is not None:
        show_error(job.error, title)
