"""A ManifestWork's conditionRules, as the work agent evaluates them on each manifest's
object (ocm pkg/work/spoke/conditions/reader.go, rules/rule.go).

A CEL rule sets its condition True when every expression is true of `object` (reason
ConditionRuleEvaluated), False at the first false one, and False with reason
ConditionRuleExpressionError, the error as message, when one does not compile or evaluate
to a boolean. Its message: `messageExpression` (with `object` and `result`) when it gives a
non-empty string, else `message`, else `Manifest is <condition>` / `Manifest is not
<condition>`. A WellKnownConditions rule uses upstream's CEL rule for the kind and condition
(Complete for Job and Pod), its message and messageExpression overridable, and sets nothing
for other kinds. Any other type sets the condition Unknown (ConditionRuleInvalid).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fleetwarden.api.meta import Condition
from fleetwarden.api.ocm.work import CEL, WELL_KNOWN_CONDITIONS, ConditionRule
from fleetwarden.semantics.cel import CelError, compile_expression, evaluate

RULE_PREFIX = "ConditionRule"  # every reason a rule sets starts so
EVALUATED = "ConditionRuleEvaluated"
EXPRESSION_ERROR = "ConditionRuleExpressionError"
INVALID = "ConditionRuleInvalid"

_JOB_COMPLETE = ConditionRule(
    condition="Complete",
    type=CEL,
    cel_expressions=[
        "hasConditions(object.status) ? object.status.conditions.filter(c, c.type == 'Complete'"
        " || c.type == 'Failed').exists(c, c.status == 'True') : false"
    ],
    message_expression='result ? "Job is finished" : "Job is not finished"',
)
_POD_COMPLETE = ConditionRule(
    condition="Complete",
    type=CEL,
    cel_expressions=["object.status.phase in ['Succeeded', 'Failed']"],
    message_expression='"Pod is in phase " + object.status.phase',
)
# DefaultWellKnownConditionResolver: (apiVersion, kind, condition) -> rule.
_WELL_KNOWN = {
    ("batch/v1", "Job", "Complete"): _JOB_COMPLETE,
    ("v1", "Pod", "Complete"): _POD_COMPLETE,
}


def evaluate_rules(
    obj: Mapping[str, Any], rules: list[ConditionRule], generation: int | None
) -> list[Condition]:
    """The conditions the rules give for the object (EvaluateConditions)."""
    conditions = []
    for rule in rules:
        condition = _condition(obj, rule)
        if condition is not None:
            condition.observed_generation = generation
            conditions.append(condition)
    return conditions


def _condition(obj: Mapping[str, Any], rule: ConditionRule) -> Condition | None:
    if rule.type == WELL_KNOWN_CONDITIONS:
        known = _WELL_KNOWN.get((str(obj.get("apiVersion")), str(obj.get("kind")), rule.condition))
        if known is None:
            return None
        overrides = {"message": rule.message, "message_expression": rule.message_expression}
        rule = known.model_copy(update={k: v for k, v in overrides.items() if v})
    elif rule.type != CEL:
        message = f"unrecognized condition rule type {rule.type}"
        return Condition(type=rule.condition, status="Unknown", reason=INVALID, message=message)
    try:
        result = _holds(obj, rule.cel_expressions or [])
    except CelError as err:
        return Condition(
            type=rule.condition, status="False", reason=EXPRESSION_ERROR, message=str(err)
        )
    status = "True" if result else "False"
    return Condition(
        type=rule.condition, status=status, reason=EVALUATED, message=_message(obj, rule, result)
    )


def _holds(obj: Mapping[str, Any], expressions: list[str]) -> bool:
    """Every expression true, stopping at the first false one."""
    for expression in expressions:
        value = evaluate(compile_expression(expression, ("object",)), {"object": obj})
        if not isinstance(value, bool):
            raise CelError(f"expected bool result, got {type(value).__name__}")
        if not value:
            return False
    return True


def _message(obj: Mapping[str, Any], rule: ConditionRule, result: bool) -> str:
    if rule.message_expression:
        try:
            program = compile_expression(rule.message_expression, ("object", "result"))
            message = evaluate(program, {"object": obj, "result": result})
        except CelError as err:
            return str(err).split("\n | ")[0]  # the error without its snippet, as upstream
        if isinstance(message, str) and message:
            return message
    if rule.message:
        return rule.message
    return f"Manifest is {rule.condition}" if result else f"Manifest is not {rule.condition}"
