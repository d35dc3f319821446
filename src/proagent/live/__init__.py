"""The proactive agent itself: watch an activity log as it grows, decide When to
Assist at every new moment, and only then ask a model How to Assist; show the
offer, and keep every offer and the user's answer as training data.

The flow (ProAgentBench Figure 1: monitor, decide when, decide how):

1. **Moments** (:mod:`._sources`): a :class:`LifeTraceFollower` reads a LifeTrace
   database another process writes (read-only, WAL-safe, new event rows by id);
   :func:`replay_moments` plays a recorded log (ProactiveBench, LifeTrace) in
   accelerated time through the same loop; an :class:`ActivityLogFollower` follows an
   ActivityWatch or screenpipe database the same way (:func:`open_follower` picks).
2. **Sample** (:func:`moment_sample`): the benchmark's Sample at moment t (same
   window and context rules as :mod:`proagent.bench.samples`), or none when
   there is no context (skip the model call).
3. **Restraint** (:class:`Restraint`): a moment waits until its window settled in front and
   its screen paused (:mod:`._settle`, ``--settle``); pause, quiet hours, app/title blocklist
   (also the apps blocked from the page, :func:`block_app`), call / screen-sharing /
   full-screen apps (``proagent/data/live_quiet_apps.json``) before deciding; offers per hour,
   cool-down after a dismiss and an offer like one dismissed today in the app after.
4. **When** (:class:`When`): any callable Sample -> P(help), with a threshold;
   **How** (:class:`HowModel`): the benchmark's zero-shot prompt to an inspect
   model, parsed into intention + query, only when When says Yes; for a remote model its prompt
   is redacted by curate's PII recognizers (``--send-screen``, :mod:`._privacy`), as the help's is.
5. **Offers** (:class:`Notifier`): terminal, desktop (notify-send / D-Bus), the
   local page (:class:`OfferPage`, 127.0.0.1 with a random token).
6. **Feedback** (:class:`FeedbackStore`, ``feedback.db``): every decision, offer
   and response; :func:`feedback_samples` turns accepted / dismissed offers
   into labelled samples for ``proagent train when --feedback``; with ``--ask-rate N`` a few
   quiet moments the decider is unsure of are asked about (:mod:`._ask`), answered like offers.
7. **Help** (:class:`LiveHelp`): an accepted offer is answered, streamed to the page and the
   terminal, with follow-ups and ratings (``help_turns``, ``help_ratings`` in ``feedback.db``);
   screen text to a remote model is redacted by curate's PII recognizers (``--send-screen``);
   the inspect task ``proagent/help`` (:mod:`.tasks`) measures it.
8. **Learning** (:class:`LearningWhen`, ``learning/`` beside ``feedback.db``): with
   ``--learn`` the decider is personalised by every answer before the next decision;
   ``proagent live reset-learning DIR`` forgets it (:func:`reset_learning`).

Commands: ``proagent live`` (:mod:`proagent.cli.live`).
"""

from ..capture import x11_fullscreen
from ._activity_follow import ActivityLogFollower, open_follower, watched_log
from ._agent import HowModel, LiveAgent, ScriptedDecider, When, how_prompt, offer_text
from ._ask import ASK_DAYS, ASK_UNCERTAINTY, DEFAULT_ASK_RATE, QUESTION_TEXT, Asker, uncertainty
from ._feedback import FEEDBACK_DB, FeedbackStore, feedback_samples, sample_from_json, sample_to_json
from ._help import (
    SEND_SCREEN,
    HelpContext,
    LiveHelp,
    ScriptedHelpModel,
    default_send_screen,
    help_context,
    make_help_model,
    rated_help,
    screen_region,
)
from ._implicit import FOCUS_WEIGHT, HORIZON_SECONDS, label_summary
from ._learn import DAY_ONE_LABELS, LEARNING_DIR, LearningWhen, load_learning_when, rank_threshold, reset_learning
from ._moments import as_of, moment_sample
from ._notify import (
    NOTIFIERS,
    DesktopNotifier,
    Notifier,
    NotifyContext,
    PageNotifier,
    TerminalNotifier,
    register_notifier,
)
from ._page import OfferPage
from ._restraint import (
    BLOCKED_APPS_FILE,
    DISMISSED_SIMILARITY,
    PAUSE_FILE,
    Restraint,
    RestraintConfig,
    block_app,
    blocked_apps,
    is_paused,
    parse_quiet_hours,
    pause,
    quiet_app_rules,
    resume,
    unblock_app,
)
from ._run import LiveOptions, ReplayProgress, RunSummary, run_replay, run_watch, start_capture, summarise, warm_how
from ._settle import SETTLE_SECONDS, TEXT_WAIT_SECONDS, settled_at
from ._setup import (
    LearnedCounts,
    LiveCommandOptions,
    LiveDecider,
    learned_counts,
    parse_live_options,
    scripted_decider,
    set_up_decider,
)
from ._sources import (
    MAX_SPEED,
    MIN_SPEED,
    REPLAY_SKIP_GAP_SECONDS,
    LifeTraceFollower,
    Moment,
    ReplayClock,
    WallClock,
    replay_moments,
)
from ._when import load_when
from .records import RESPONSES, DecisionSummary, Latency, LearningManifest, LiveDecision, Offer, Question, Response

__all__ = [
    "LearnedCounts",
    "LiveCommandOptions",
    "LiveDecider",
    "learned_counts",
    "parse_live_options",
    "scripted_decider",
    "set_up_decider",
    "ASK_UNCERTAINTY",
    "ASK_DAYS",
    "DEFAULT_ASK_RATE",
    "uncertainty",
    "QUESTION_TEXT",
    "Asker",
    "FOCUS_WEIGHT",
    "HORIZON_SECONDS",
    "label_summary",
    "ActivityLogFollower",
    "BLOCKED_APPS_FILE",
    "DISMISSED_SIMILARITY",
    "SETTLE_SECONDS",
    "TEXT_WAIT_SECONDS",
    "block_app",
    "blocked_apps",
    "settled_at",
    "unblock_app",
    "FEEDBACK_DB",
    "LEARNING_DIR",
    "MAX_SPEED",
    "MIN_SPEED",
    "REPLAY_SKIP_GAP_SECONDS",
    "ReplayProgress",
    "NOTIFIERS",
    "PAUSE_FILE",
    "RESPONSES",
    "SEND_SCREEN",
    "HelpContext",
    "LiveHelp",
    "ScriptedHelpModel",
    "default_send_screen",
    "help_context",
    "make_help_model",
    "rated_help",
    "screen_region",
    "DesktopNotifier",
    "FeedbackStore",
    "HowModel",
    "how_prompt",
    "LifeTraceFollower",
    "LearningWhen",
    "DAY_ONE_LABELS",
    "rank_threshold",
    "LiveAgent",
    "DecisionSummary",
    "Latency",
    "LearningManifest",
    "LiveDecision",
    "LiveOptions",
    "Moment",
    "Notifier",
    "NotifyContext",
    "Offer",
    "OfferPage",
    "Question",
    "PageNotifier",
    "ReplayClock",
    "Response",
    "Restraint",
    "RestraintConfig",
    "RunSummary",
    "ScriptedDecider",
    "TerminalNotifier",
    "WallClock",
    "When",
    "as_of",
    "feedback_samples",
    "is_paused",
    "load_learning_when",
    "load_when",
    "moment_sample",
    "offer_text",
    "open_follower",
    "parse_quiet_hours",
    "pause",
    "quiet_app_rules",
    "replay_moments",
    "reset_learning",
    "resume",
    "run_replay",
    "run_watch",
    "sample_from_json",
    "sample_to_json",
    "start_capture",
    "summarise",
    "warm_how",
    "watched_log",
    "x11_fullscreen",
    "register_notifier",
]
