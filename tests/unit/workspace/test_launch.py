"""Where a gateway-launched kernel starts, and what the first cell says about the workspace."""

from __future__ import annotations

from pathlib import Path

from logician_kernel.workspace.launch import starting_directory, unsafe_workspace, workspace_notice


def test_kernel_working_dir_is_used_when_it_names_a_directory(tmp_path: Path) -> None:
    nb = tmp_path / "team" / "nb"
    nb.mkdir(parents=True)
    start = starting_directory({"KERNEL_WORKING_DIR": str(nb)}, tmp_path)
    assert start.path == nb.resolve() and start.from_launcher and start.notice is None
    relative = starting_directory({"KERNEL_WORKING_DIR": "team/nb"}, tmp_path)
    assert relative.path == nb.resolve()
    same = starting_directory({"KERNEL_WORKING_DIR": str(tmp_path)}, tmp_path)
    assert not same.from_launcher  # nothing moved: nothing to announce
    assert workspace_notice(nb, same, None) is None


def test_a_missing_directory_is_reported_and_the_kernel_stays(tmp_path: Path) -> None:
    start = starting_directory({"KERNEL_WORKING_DIR": "/no/such/dir"}, tmp_path)
    assert start.path == tmp_path.resolve() and not start.from_launcher
    assert start.notice is not None
    assert "KERNEL_WORKING_DIR='/no/such/dir' is not a directory" in start.notice
    assert str(tmp_path.resolve()) in start.notice
    assert starting_directory({}, tmp_path).notice is None


def test_the_notice_names_where_the_workspace_came_from(tmp_path: Path) -> None:
    nb = tmp_path / "nb"
    nb.mkdir()
    start = starting_directory({"KERNEL_WORKING_DIR": str(nb)}, tmp_path)
    said = workspace_notice(tmp_path, start, None)
    assert said is not None and f"the workspace is {tmp_path}" in said
    assert f"KERNEL_WORKING_DIR={nb.resolve()}" in said
    by_setting = workspace_notice(tmp_path / "w", start, Path("~/w"))
    assert by_setting is not None and "workspace.root" in by_setting


def test_a_gateway_kernel_never_takes_a_home_or_the_root_as_its_workspace(tmp_path: Path) -> None:
    home = tmp_path / "home"
    project = home / "project"
    project.mkdir(parents=True)
    env = {"HOME": str(home), "KERNEL_GATEWAY": "1"}
    left_home = starting_directory(env, home)
    assert left_home.gateway
    said = unsafe_workspace(home, left_home, None, env)
    assert said is not None and "a home directory" in said and "no KERNEL_WORKING_DIR" in said
    missing = {**env, "KERNEL_WORKING_DIR": "/no/such/dir"}
    said = unsafe_workspace(home, starting_directory(missing, home), None, missing)
    assert said is not None and "'/no/such/dir' does not exist on this host" in said
    root = starting_directory({"KERNEL_ID": "k1"}, Path("/"))
    said = unsafe_workspace(Path("/"), root, None, {"KERNEL_ID": "k1"})
    assert said is not None and "the root directory" in said
    # The launch directory is fine when it is not a home; so is a home a user asked for.
    assert unsafe_workspace(project, starting_directory(env, project), None, env) is None
    assert unsafe_workspace(home, left_home, home, env) is None  # workspace.root says so
    local = starting_directory({"HOME": str(home)}, home)  # a local kernel: not our call
    assert unsafe_workspace(home, local, None, {"HOME": str(home)}) is None
