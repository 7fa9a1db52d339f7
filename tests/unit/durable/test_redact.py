from logician_kernel.durable.redact import redact


def test_known_values_and_credential_shapes_are_masked() -> None:
    cases = {
        'key = "sk-abcdefghijklmnop123"': 'key = "****"',
        'OPENAI_API_KEY="abc"; x = 2': 'OPENAI_API_KEY="****"; x = 2',
        'h = {"Authorization": "Bearer abcdefghijk"}': 'h = {"Authorization": "Bearer ****"}',
        'db = "postgres://me:hunter2@host/db"': 'db = "postgres://****@host/db"',
        "password = 'hunter2'": "password = '****'",
        'print("MYSECRETVALUE")': 'print("****")',
    }
    for text, expected in cases.items():
        assert redact(text, ["MYSECRETVALUE"]) == expected


def test_ordinary_code_is_left_alone() -> None:
    for text in ("x = 1", "df.to_csv('out.csv')", "tokens = tokenize(text)", "sk = 3"):
        assert redact(text, ["", "abc"]) == text


def test_credential_named_keys_in_every_form_are_masked() -> None:
    cases = {
        "DB_PASSWORD=hunter2": "DB_PASSWORD=****",
        "password: hunter2": "password: ****",
        "  stripe_secret_key: 'abc def'": "  stripe_secret_key: '****'",
        '{"auth_token": "t0k3n-value", "user": "me"}': '{"auth_token": "****", "user": "me"}',
        "export GITHUB_TOKEN=abc123xyz": "export GITHUB_TOKEN=****",
        "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG": "AWS_SECRET_ACCESS_KEY=****",
        "MY_SERVICE_KEY=k-123": "MY_SERVICE_KEY=****",
        "apiKey = 'x1'": "apiKey = '****'",
    }
    for text, expected in cases.items():
        assert redact(text) == expected, text


def test_known_formats_and_urls_are_masked() -> None:
    jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N"
    pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEabc\n-----END RSA PRIVATE KEY-----"
    for secret in (jwt, pem, "AIzaSyA1234567890abcdefghijklmnopqrstu", "glpat-abcdefghijklmnop"):
        assert secret not in redact(f"value {secret} end")
    assert redact("https://user:pw@host/x") == "https://****@host/x"
    assert redact("GET /x?token=abcdef&y=1") == "GET /x?token=****&y=1"


def test_values_of_secret_environment_variables_are_masked(monkeypatch) -> None:
    monkeypatch.setenv("SOME_SERVICE_PASSWORD", "plain-looking-value")
    monkeypatch.setenv("HARMLESS", "plain-looking-other")
    text = "a plain-looking-value and plain-looking-other"
    assert redact(text) == "a **** and plain-looking-other"


def test_ordinary_names_that_contain_key_words_are_left_alone() -> None:
    for text in ("max_input_tokens = 5", "tokens: 12", "keyboard = 1", "monkey = 2"):
        assert redact(text) == text
