import base64
import copy

from benchwarmers.redaction import (
    image_placeholder,
    redact_messages,
    redact_request,
    scrub_answer,
    scrub_text,
    url_secrets,
    without_query,
)


def data_url(nbytes: int, mime: str = "image/png") -> str:
    return f"data:{mime};base64," + base64.b64encode(bytes(nbytes)).decode()


def test_data_url_size_in_kb() -> None:
    assert image_placeholder(data_url(412 * 1024)) == "[image: data URL, 412 KB]"
    assert image_placeholder(data_url(1023 * 1024)) == "[image: data URL, 1023 KB]"


def test_data_url_size_in_mb_from_1024_kb() -> None:
    assert image_placeholder(data_url(1024 * 1024)) == "[image: data URL, 1.0 MB]"
    assert image_placeholder(data_url(int(15.2 * 1024 * 1024))) == "[image: data URL, 15.2 MB]"


def test_tiny_and_empty_data_urls() -> None:
    assert image_placeholder(data_url(100)) == "[image: data URL, 1 KB]"
    assert image_placeholder("data:image/png;base64,") == "[image: data URL, 0 KB]"


def test_padding_does_not_count() -> None:
    # 2 bytes -> "AAA=", 1 byte -> "AA==": sizes come from unpadded length.
    one_kb_plus = data_url(1024 * 3 + 2)
    assert one_kb_plus.endswith("=")
    assert image_placeholder(one_kb_plus) == "[image: data URL, 3 KB]"


def test_http_urls_lose_credentials_and_query() -> None:
    assert (
        image_placeholder("https://user:pw@Example.com:8443/cats/1.png?sig=abc&exp=1")
        == "[image: https://Example.com:8443/cats/1.png?...]"
    )
    assert image_placeholder("http://example.com/a.png") == "[image: http://example.com/a.png]"
    assert image_placeholder("https://example.com/a.png#frag") == "[image: https://example.com/a.png?...]"


def test_other_schemes() -> None:
    assert image_placeholder("ftp://example.com/a.png") == "[image: ftp URL]"
    assert image_placeholder("blob:https://x/1") == "[image: blob URL]"
    assert image_placeholder("not a url") == "[image: unknown URL]"


def test_redact_messages_replaces_images_and_leaves_input_alone() -> None:
    png = data_url(412 * 1024)
    messages = [
        {"role": "system", "content": "be brief"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "what is this?"},
                {"type": "image_url", "image_url": {"url": png, "detail": "high"}},
                {"type": "image_url", "image_url": {"url": "https://img.example/a.jpg?token=1"}},
            ],
        },
        {"role": "assistant", "content": None, "tool_calls": [{"id": "t1"}]},
    ]
    before = copy.deepcopy(messages)

    redacted = redact_messages(messages)

    assert messages == before
    assert redacted == [
        {"role": "system", "content": "be brief"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "what is this?"},
                {"type": "text", "text": "[image: data URL, 412 KB]"},
                {"type": "text", "text": "[image: https://img.example/a.jpg?...]"},
            ],
        },
        {"role": "assistant", "content": None, "tool_calls": [{"id": "t1"}]},
    ]


def test_redact_messages_scrubs_inline_data_urls_in_strings_only() -> None:
    text = f"see {data_url(2048, 'image/jpeg')} and keep sk-abcdefghijklmnopqrstu as typed"
    redacted = redact_messages([{"role": "user", "content": text}])
    assert redacted == [
        {"role": "user", "content": "see [image: data URL, 2 KB] and keep sk-abcdefghijklmnopqrstu as typed"}
    ]


def test_redact_messages_describes_audio_and_files() -> None:
    audio = base64.b64encode(bytes(4096)).decode()
    redacted = redact_messages(
        [
            {
                "role": "user",
                "content": [
                    {"type": "input_audio", "input_audio": {"data": audio, "format": "wav"}},
                    {
                        "type": "file",
                        "file": {"filename": "a.pdf", "file_data": data_url(2048, "application/pdf")},
                    },
                ],
            }
        ]
    )
    assert redacted[0]["content"] == [
        {"type": "text", "text": "[audio: wav, 4 KB]"},
        {"type": "text", "text": "[file: a.pdf, 2 KB]"},
    ]


def test_scrub_text_secrets_and_key_shapes() -> None:
    text = (
        "key=provider-secret-123 short=abc "
        "Authorization: Bearer abc.DEF-123_x "
        "bwk_AAAAAAAAAAAAAAAAAAAAAAAA sk-or-v1-0123456789abcdef0123 "
        "AIzaSyA0123456789abcdefghijklmnopqrstu gsk_0123456789abcdefghijKL "
        "risk-assessment-framework-v2 https://bob:hunter2@proxy.example/x"
    )
    assert scrub_text(text, ["provider-secret-123", "abc"]) == (
        "key=[redacted] short=abc "
        "Authorization: Bearer [redacted] "
        "[redacted] [redacted] "
        "[redacted] [redacted] "
        "risk-assessment-framework-v2 https://[redacted]@proxy.example/x"
    )


def test_scrub_text_short_secrets_are_ignored() -> None:
    assert scrub_text("password1 pass", ["pass"]) == "password1 pass"


def test_scrub_text_on_a_15_mb_string() -> None:
    big = "prefix " + data_url(int(11.4 * 1024 * 1024)) + " suffix sk-0123456789abcdefXYZ"
    assert len(big) > 15_000_000
    assert scrub_text(big) == "prefix [image: data URL, 11.4 MB] suffix [redacted]"


def test_scrub_text_leaves_plain_text_alone() -> None:
    text = "nothing to see here: tokens, keys and bearers in prose.\n" * 1000
    assert scrub_text(text, ["not-in-the-text"]) == text


def test_scrub_text_cuts_every_url_query_string_and_fragment() -> None:
    text = (
        "cannot fetch https://img.example/a.png?token=abc123&x=1, "
        'nor "http://img.example/b.png#sig=xyz" nor https:\\/\\/img.example\\/c.png?sig=q\\" '
        "see https://docs.example/errors and https://docs.example/limits?"
    )
    assert scrub_text(text) == (
        "cannot fetch https://img.example/a.png?... "
        'nor "http://img.example/b.png?..." nor https:\\/\\/img.example\\/c.png?...\\" '
        "see https://docs.example/errors and https://docs.example/limits?..."
    )


def test_without_query_and_url_secrets() -> None:
    assert without_query("https://api.example/v1?api-version=2024#x") == "https://api.example/v1?..."
    assert without_query("https://api.example/v1") == "https://api.example/v1"
    assert url_secrets("https://bob:hunter22@img.example/a.png?sig=abc%2Bdef&exp=1#frag") == [
        "sig=abc%2Bdef&exp=1",
        "frag",
        "hunter22",
        "bob:hunter22@",
        "abc%2Bdef",
        "abc+def",
        "1",
    ]
    assert url_secrets("data:image/png;base64,AAAA") == []


def test_scrub_answer_removes_known_secrets_and_gateway_keys_but_keeps_content() -> None:
    answer = (
        f"key provider-secret-123, gateway bwk_{'A' * 43}, example sk-abcdefghijklmnopqrstu, "
        f"Bearer YOUR_KEY, https://x.example/a?q=1, image {data_url(2048)}"
    )
    assert scrub_answer(answer, ["provider-secret-123"]) == (
        "key [redacted], gateway [redacted], example sk-abcdefghijklmnopqrstu, "
        "Bearer YOUR_KEY, https://x.example/a?q=1, image [image: data URL, 2 KB]"
    )


def test_long_base64_runs_in_any_string_become_placeholders_but_words_and_separators_stay() -> None:
    raw = base64.b64encode(bytes(range(256)) * 8).decode()  # 2 KB
    separator = "-" * 300
    identifier = "snake_case_" * 30
    hex_digest = "0123456789abcdef" * 20
    redacted = redact_request(
        {"metadata": {"blob": f"<{raw}>", "rule": separator, "name": identifier}, "h": hex_digest}
    )
    assert redacted.stored == {
        "metadata": {"blob": "<[data: base64, 2 KB]>", "rule": separator, "name": identifier},
        # Letters and digits: a long hex run reads as data too (the seats still get it as sent).
        "h": "[data: base64, 1 KB]",
    }
    assert redacted.hidden == ()


def test_redact_request_notes_the_secrets_of_image_urls() -> None:
    body = {
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "image_url", "image_url": {"url": "https://img.example/a.png?sig=abcdefgh123"}},
                    {"type": "input_image", "image_url": "https://u:passw0rd!@img.example/b.png"},
                ],
            }
        ]
    }
    redacted = redact_request(body)
    assert redacted.stored["messages"][0]["content"] == [
        {"type": "text", "text": "[image: https://img.example/a.png?...]"},
        {"type": "text", "text": "[image: https://img.example/b.png]"},
    ]
    assert redacted.hidden == ("sig=abcdefgh123", "abcdefgh123", "passw0rd!", "u:passw0rd!@")


def test_scrub_answer_removes_a_quoted_image_urls_userinfo_however_short() -> None:
    hidden = redact_request(
        {
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "image_url", "image_url": {"url": "https://user:pw@img.example/a.png?sig=s3cret-sig"}}
                    ],
                }
            ]
        }
    ).hidden
    answer = "I fetched https://user:pw@img.example/a.png?sig=s3cret-sig; see also ftp://user:pw@other and user:pw"
    assert scrub_answer(answer, hidden) == (
        "I fetched https://[redacted]@img.example/a.png?[redacted]; see also ftp://[redacted]@other and user:pw"
    )
