/// The serial executor an actor runs on, chosen once when it is made: the gateway's event loop when it
/// has one (so the actor's code runs on the loop by construction, in the same pass as the I/O that
/// woke it), or a dispatch queue of its own. Actors that hold one return ``unownedExecutor`` as their
/// own `unownedExecutor`.
package struct ExecutorChoice: Sendable {
    private let executor: any SerialExecutor

    /// `shared` if given (the loop), otherwise a queue of the actor's own named `label`.
    package init(_ shared: (any SerialExecutor)?, otherwise label: String) {
        executor = shared ?? SerialQueueExecutor(label: label)
    }

    package var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// The same executor as a task executor, when it is one (the loop). The actor's long-lived tasks
    /// prefer it: Swift 6.3 resumes a task whose wait ended (a continuation, a mailbox) on the task's
    /// preferred executor, or else on the global executor and only then hops to the actor, which
    /// cost two thread switches per wait (`make bench`: 9 switches per write instead of 3).
    package var taskExecutor: (any TaskExecutor)? { executor as? any TaskExecutor }
}

/// An actor on an executor chosen when it is made: what it starts prefers that executor without being
/// told. A ``Deadline/race`` it awaits reads the choice from the caller's isolation, so the body's
/// task prefers the loop and a body that waits resumes there.
package protocol ExecutorChoosingActor: Actor {
    nonisolated var executorChoice: ExecutorChoice { get }
}

extension ExecutorChoosingActor {
    /// Runs `body` on this actor in a task that prefers the actor's chosen executor when it is a task
    /// executor (the loop): for the actor's long-lived work, whose every wait (a mailbox, a stream)
    /// then resumes on the loop (``ExecutorChoice/taskExecutor`` says why).
    package func preferringChosenExecutor<T>(_ body: () async -> T) async -> T {
        await withTaskExecutorPreference(executorChoice.taskExecutor, operation: body)
    }
}

/// `operation`, isolated to the actor of the code that writes it: a task or a task group's child made
/// with it starts on that actor's executor (the loop), not on the global executor and then hops over.
/// A task group's `addTask` takes a closure as nonisolated otherwise (Swift 6.3).
@inlinable
package func onThisActor<Result>(
    @_inheritActorContext _ operation: @escaping @isolated(any) @Sendable () async -> Result
) -> @isolated(any) @Sendable () async -> Result {
    operation
}
