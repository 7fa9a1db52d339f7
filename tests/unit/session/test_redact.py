from logician_kernel.session.redact import redact


def test_known_values_and_credential_shapes_are_masked() -> None:
    cases = {
        'key = "sk-abcdefghijklmnop123"': 'key = "****"',
        'OPENAI_API_KEY="abc"; x = 2': 'OPENAI_API_KEY="****"; x = 2',
        'h = {"Authorization": "Bearer abcdefghijk"}': 'h = {"Authorization": "Bearer ****"}',
        'db = "postgres://me:hunter2@host/db"': 'db = "postgres://me:****@host/db"',
        "password = 'hunter2'": "password = '****'",
        'print("MYSECRETVALUE")': 'print("****")',
    }
    for text, expected in cases.items():
        assert redact(text, ["MYSECRETVALUE"]) == expected


def test_ordinary_code_is_left_alone() -> None:
    for text in ("x = 1", "df.to_csv('out.csv')", "tokens = tokenize(text)", "sk = 3"):
        assert redact(text, ["", "abc"]) == text
