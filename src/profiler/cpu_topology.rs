//! The physical cores this process may run on. A crowd update's threads
//! scale with cores, not with hardware threads: where the threads it
//! runs are more than the cores (two hardware threads of one core, SMT,
//! share its units; or more threads asked for than there are CPUs), their
//! speed-up over one thread is bounded by the cores, and `bench
//! --cpu-only` says so beside the efficiency it reports.

use std::collections::BTreeSet;
use std::path::Path;

/// The distinct physical cores among the CPUs this process may run on
/// (`Cpus_allowed_list` in `/proc/self/status`, each CPU's package and
/// core under `/sys/devices/system/cpu`); `None` where Linux does not
/// say (another system, a container hiding `/sys`).
pub fn physical_cores() -> Option<usize> {
    cores_of(Path::new("/sys/devices/system/cpu"), &allowed_cpus()?)
}

/// The CPUs this process may run on (`Cpus_allowed_list` in
/// `/proc/self/status`).
fn allowed_cpus() -> Option<Vec<u32>> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    cpu_list(status.lines().find_map(|line| line.strip_prefix("Cpus_allowed_list:"))?)
}

/// The CPUs of a Linux CPU list ("0-3,8,10-11"); `None` for anything
/// else.
fn cpu_list(text: &str) -> Option<Vec<u32>> {
    let mut cpus = Vec::new();
    for part in text.trim().split(',') {
        let (first, last): (u32, u32) = match part.split_once('-') {
            Some((first, last)) => (first.trim().parse().ok()?, last.trim().parse().ok()?),
            None => {
                let cpu = part.trim().parse().ok()?;
                (cpu, cpu)
            }
        };
        // Linux numbers at most a few thousand CPUs.
        if last < first || last - first > 1 << 16 {
            return None;
        }
        cpus.extend(first..=last);
    }
    Some(cpus)
}

/// How many distinct cores (package and core id, `cpuN/topology/` under
/// `root`) the `cpus` are on; `None` where one of them is not described.
fn cores_of(root: &Path, cpus: &[u32]) -> Option<usize> {
    let read = |cpu: u32, file: &str| -> Option<i64> {
        let path = root.join(format!("cpu{cpu}/topology/{file}"));
        std::fs::read_to_string(path).ok()?.trim().parse().ok()
    };
    let cores = cpus
        .iter()
        .map(|&cpu| Some((read(cpu, "physical_package_id")?, read(cpu, "core_id")?)))
        .collect::<Option<BTreeSet<_>>>()?;
    (!cores.is_empty()).then_some(cores.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_are_read_as_linux_writes_them() {
        assert_eq!(cpu_list("0-1\n"), Some(vec![0, 1]));
        assert_eq!(cpu_list(" 0-2,5,8-9"), Some(vec![0, 1, 2, 5, 8, 9]));
        assert_eq!(cpu_list("7"), Some(vec![7]));
        for bad in ["", "a", "3-1", "0-", "1,,2", "0-4294967295"] {
            assert_eq!(cpu_list(bad), None, "{bad:?}");
        }
    }

    /// Two packages of two cores, each core with two hardware threads
    /// (CPUs 0-3 on package 0, 4-7 on package 1; core ids restart in each
    /// package).
    #[test]
    fn hardware_threads_of_one_core_count_once() {
        let root = tempfile::tempdir().unwrap();
        for cpu in 0..8_u32 {
            let topology = root.path().join(format!("cpu{cpu}/topology"));
            std::fs::create_dir_all(&topology).unwrap();
            std::fs::write(topology.join("physical_package_id"), format!("{}\n", cpu / 4)).unwrap();
            std::fs::write(topology.join("core_id"), format!("{}\n", cpu % 4 / 2)).unwrap();
        }
        let cores = |cpus: &[u32]| cores_of(root.path(), cpus);
        assert_eq!(cores(&[0, 1, 2, 3, 4, 5, 6, 7]), Some(4));
        assert_eq!(cores(&[0, 1]), Some(1), "two threads of one core");
        assert_eq!(cores(&[0, 2]), Some(2));
        assert_eq!(cores(&[1, 5]), Some(2), "core 0 of each package");
        assert_eq!(cores(&[0, 8]), None, "CPU 8 is not described");
        assert_eq!(cores(&[]), None);
    }

    #[test]
    fn this_machine_has_as_many_cores_as_its_cpus_or_fewer() {
        // Where sysfs describes the CPUs (Linux with /sys mounted);
        // elsewhere there is nothing to read.
        if Path::new("/sys/devices/system/cpu/cpu0/topology/core_id").exists() {
            let cores = physical_cores().expect("Linux describes its CPUs");
            let cpus = allowed_cpus().expect("the CPUs this process may use").len();
            assert!((1..=cpus).contains(&cores), "{cores} cores of {cpus} CPUs");
        }
    }
}
