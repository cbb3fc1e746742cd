

def test_cgroup_quota_reads_cpu_max(tmp_path):
    from toolkit.threads import cgroup_quota

    f = tmp_path / "cpu.max"
    f.write_text("1600000 100000\n")
    assert cgroup_quota(str(f)) == 16
    f.write_text("150000 100000\n")          # 1.5 CPUs: rounded up
    assert cgroup_quota(str(f)) == 2
    f.write_text("max 100000\n")
    assert cgroup_quota(str(f)) is None
    assert cgroup_quota(str(tmp_path / "none")) is None
    f.write_text("garbage")
    assert cgroup_quota(str(f)) is None
