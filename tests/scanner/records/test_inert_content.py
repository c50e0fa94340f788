"""Finding <noscript> and <template> contents as the HTML tokenizer finds them (records/inert_content.py)."""

from __future__ import annotations

import pytest

from websec_app.scanner.records.inert_content import set_apart


@pytest.mark.parametrize(
    ("text", "contents"),
    [
        ("<noscript><div>x</noscript><p>", ("<div>x",)),
        ("<NoScript a='>'>x</NOSCRIPT ><p>", ("x",)),  # case-insensitive; a quoted ">" ends no tag
        ("<noscript><!-- </noscript> -->", ("<!-- ",)),  # raw text: the first </noscript ends it
        ("<noscript/><script src=a></script>", ("<script src=a></script>",)),  # no self-closing noscript
        ("<template><template><p></template><i></template><b>", ("<template><p></template><i>",)),
        ("<template>open to the end<script src=a>", ("open to the end<script src=a>",)),
        ("<template><noscript></template></noscript></template><b>", ("<noscript></template></noscript>",)),
        ('<template><script>"</template>"</script></template>', ('<script>"</template>"</script>',)),
        ("<svg><foreignObject><noscript>x</noscript></foreignObject></svg>", ("x",)),  # HTML again there
        ("<svg><desc><noscript>x</noscript></desc><noscript>y</noscript></svg><noscript>z</noscript>", ("x", "z")),
        # where browsers see no such tag
        ('<div title="<noscript>">', ()),
        ("<!-- <noscript> -->", ()),
        ("<!--> <noscript>x</noscript>", ("x",)),  # "<!-->" is a whole (empty) comment
        ("<? <noscript> >", ()),  # a bogus comment
        ("</ <noscript>>", ()),
        ('<script>var s = "<noscript>";</script>', ()),
        ("<script><!--<script></script><noscript></script>--></script>", ()),  # double-escaped script data
        ("<style><noscript></style>", ()),
        ("<textarea><template></textarea>", ()),
        ("<svg><noscript>x</noscript><template>y</template></svg>", ()),  # SVG elements, nothing special
        # an HTML breakout tag leaves foreign content (HTML §13.2.6.5): <font> only with color, face or size
        ("<svg><div>x</div><noscript>y</noscript></svg>", ("y",)),
        ("<svg><font><noscript>x</noscript></svg><noscript>y</noscript>", ("y",)),
        ("<svg><font face=x><noscript>x</noscript></svg>", ("x",)),
        ("<svg><font title=' color'><noscript>x</noscript></svg>", ()),  # an attribute value names nothing
        # annotation-xml holds HTML only with an HTML encoding (§13.2.6.1 "HTML integration point")
        ("<math><annotation-xml><noscript>x</noscript></annotation-xml></math>", ()),
        ("<math><annotation-xml encoding='Application/XHTML+XML'><noscript>x</noscript></math>", ("x",)),
        ("<svg><annotation-xml encoding=text/html><noscript>x</noscript></svg>", ()),  # a MathML element only
        ("<svg><svg/><div></div><noscript>x</noscript></svg>", ("x",)),  # a self-closed <svg> holds nothing
        ("<svg><![CDATA[<noscript>]]></svg>", ()),
        ("<plaintext><noscript>", ()),
    ],
)
def test_contents_are_found_where_the_html_tokenizer_finds_them(text: str, contents: tuple[str, ...]) -> None:
    found = set_apart(text, "m", 1.0)
    assert found.contents == contents
    assert found.complete


def test_each_content_is_replaced_by_a_marker_naming_it() -> None:
    found = set_apart("<p><noscript a=1>x</noscript><template/>y</template>", "m", 1.0)
    assert found.text == '<p><noscript m="0" a=1></noscript><template m="1"/></template>'
    assert found.contents == ("x", "y")


@pytest.mark.parametrize(
    ("text", "handed_on"),
    [
        ("<svg><g><div>x</div></g></svg>", "<svg><g></svg><div>x</div></g></svg>"),
        ("<math><mi><svg><p>x", "<math><mi><svg></svg><p>x"),  # back to the integration point only
        ("<math><svg><b>x", "<math><svg></svg></math><b>x"),
        ("<svg><font color=red>x", "<svg></svg><font color=red>x"),
        ("<svg><font>x", "<svg><font>x"),
        ("<template><svg><div>x</template>", '<template m="0"></template>'),  # set apart as written
    ],
)
def test_foreign_content_is_closed_where_browsers_leave_it(text: str, handed_on: str) -> None:
    # libxml2 knows no foreign content: the end tags browsers imply at a breakout tag are written for it
    assert set_apart(text, "m", 1.0).text == handed_on


def test_a_page_without_noscript_or_template_is_handed_on_as_it_is() -> None:
    text = "<script>x</script>" * 1000
    assert set_apart(text, "m", 1.0).text is text


def test_a_form_opened_while_another_is_is_marked_dropped() -> None:
    # Given forms nested, after a </form>, inside a template (whose content is apart), and in SVG
    text = "<form a><form b></form><form c><template><form d></template><svg><form e></svg><FORM f>"
    # Then only those HTML ignores carry the marker: the form element pointer is set by c, not unset in the template
    found = set_apart(text, "m", 1.0)
    assert found.text == (
        '<form a><form m="dropped" b></form><form c><template m="0"></template><svg><form e></svg><FORM m="dropped" f>'
    )
    # And a page with a single form is handed on as it is
    assert set_apart("<form a><p>x</p></form>", "m", 1.0).text == "<form a><p>x</p></form>"


def test_past_its_cpu_time_the_rest_is_left_as_it_was() -> None:
    # Given 100,000 comments after a noscript, and no time at all
    text = "<noscript>a</noscript>" + "<!---->" * 100_000 + "<noscript>b</noscript>"
    found = set_apart(text, "m", 0.0)
    # Then the tokenizer stops at its first look at the clock, having set apart what it had reached
    assert not found.complete
    assert found.contents == ("a",)
    assert found.text.endswith("<noscript>b</noscript>")
