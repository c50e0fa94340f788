"""A labelled text field that says in the page what is wrong with it (issue 15).

The message sits under the field, in red, and is tied to it for screen readers: the input gets
`aria-invalid="true"` and `aria-describedby` names the message, and the message is a polite live region
that is always in the page (empty while there is nothing to say), so a change of its text is announced.
The forms that use it set `novalidate`: the browser's own bubble would stop the submit before the page
could say anything, and it says nothing to a screen reader that the page can control.
"""

from __future__ import annotations

import reflex as rx

#: Radix Themes' own border of a surface text field (`.rt-TextFieldRoot.rt-variant-surface`), and ours when invalid.
_RADIX_BORDER = "inset 0 0 0 var(--text-field-border-width) var(--gray-a7)"
_INVALID_RING = "inset 0 0 0 2px var(--red-9)"


def field_id(form: str, name: str) -> str:
    return f"field-{form}-{name}" if form else f"field-{name}"


def field_input(
    label: str,
    name: str,
    *,
    error: rx.Var[str] | str | None = None,
    placeholder: str = "",
    input_type: str = "text",
    hint: str = "",
    default_value: rx.Var[str] | str | None = None,
    required: bool = False,
    max_length: int | None = None,
    autocomplete: str = "off",
    form: str = "",
) -> rx.Component:
    """A text field with a visible <label>, and a hint tied to it by aria-describedby.

    `error` is the message shown (and announced) for this field, or "" while there is none. A field that
    cannot be wrong (an optional name whose length the browser keeps) passes no `error` and has no message.
    `form` names the form, so ids stay unique on a page with several forms asking for a URL."""
    input_id = field_id(form, name)
    hint_id, error_id = f"{input_id}-hint", f"{input_id}-error"
    props: dict[str, object] = {}
    if default_value is not None:
        props["default_value"] = default_value
    if max_length is not None:
        props["max_length"] = max_length
    described = [hint_id] if hint else []
    if error is not None:
        described.append(error_id)
        props["aria_invalid"] = rx.cond(error != "", "true", "false")
        # A red ring as well as the message: the field is found at a glance (not by colour alone).
        props["box_shadow"] = rx.cond(error != "", _INVALID_RING, _RADIX_BORDER)
    if described:
        props["aria_describedby"] = " ".join(described)
    control = rx.input(
        id=input_id,
        name=name,
        placeholder=placeholder,
        type=input_type,
        size="3",
        width="100%",
        required=required,
        auto_complete=autocomplete,
        **props,
    )
    return rx.vstack(
        rx.el.label(label, html_for=input_id, class_name="field-label"),
        control if error is None else _with_message(control, error, error_id, input_id),
        rx.text(hint, size="1", color_scheme="gray", id=hint_id) if hint else rx.fragment(),
        spacing="1",
        width="100%",
    )


def _with_message(control: rx.Component, error: rx.Var[str] | str, error_id: str, input_id: str) -> rx.Component:
    """The input and its message in one box: an empty message takes no room (no gap of the stack above it),
    so a button beside an untouched field stays level with the input."""
    return rx.box(
        control,
        rx.text(
            rx.cond(
                error != "",
                # Its own size however the message wraps, level with the first line.
                rx.icon("circle-alert", size=14, aria_hidden="true", flex_shrink="0", margin_top="0.2rem"),
                rx.fragment(),
            ),
            error,
            id=error_id,
            aria_live="polite",
            size="2",
            weight="medium",
            color_scheme="red",
            display="flex",
            align_items="start",
            gap="0.3rem",
            padding_top=rx.cond(error != "", "0.3rem", "0"),
            data_testid=f"{input_id}-error",
        ),
        width="100%",
    )


def field_row_form(
    field: rx.Component,
    *,
    submit: str,
    loading: rx.Var[bool] | bool,
    test_id: str,
    on_submit: object,  # an event handler of a state, as `rx.form` takes it
    icon: str | None = None,
    extra: tuple[rx.Component, ...] = (),
    reset_on_submit: bool = False,
    aria_label: str | None = None,
) -> rx.Component:
    """A form of one `field_input` (it takes the room left), `extra` fields and a submit button: in a row from
    the `sm` breakpoint, stacked below it. The button stays level with the inputs, below their labels, whatever
    message or hint grows under a field. `novalidate`: the page says what is wrong, next to the field."""
    label = (rx.icon(icon, aria_hidden="true"), submit) if icon else (submit,)
    named = {"aria_label": aria_label} if aria_label else {}
    return rx.form(
        rx.flex(
            rx.box(field, flex="1", min_width="0", width="100%"),
            *extra,
            rx.box(
                rx.button(*label, type="submit", size="3", loading=loading, data_testid=test_id, width="100%"),
                padding_top=rx.breakpoints(initial="0", sm="calc(var(--line-height-2) + var(--space-1))"),
                flex_shrink="0",
            ),
            spacing="3",
            align={"initial": "stretch", "sm": "start"},
            direction={"initial": "column", "sm": "row"},
            width="100%",
        ),
        on_submit=on_submit,
        reset_on_submit=reset_on_submit,
        no_validate=True,
        width="100%",
        **named,
    )


__all__ = ["field_id", "field_input", "field_row_form"]
