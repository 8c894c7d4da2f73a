/// Which of an origin's connections the next request goes to: the pool's decisions, with
/// nothing but counts, so that they are tested without sockets.
///
/// A request goes to an idle connection first, then to a new one while there are fewer than
/// `connectionsPerHost`. Only then may a small request (``HTTPGetRequest/isPipelinable``) wait
/// behind other small ones, on the least busy connection with fewer than `depth` in flight.
/// A large or unknown answer never has anything sent behind it, so a small file never waits
/// for a large one; it waits for a connection of its own, and while it waits no small request
/// is queued anywhere, or a steady stream of them could keep every connection busy for ever.
///
/// A connection may be opened ahead of any request (``openAhead()``): the first request that
/// comes while it opens adopts it, as if it had opened it itself, instead of opening another.
struct PipelineSchedule: Sendable {
    /// What a request is to do.
    enum Decision: Equatable {
        /// Go out on connection `id`, now counted as in flight there.
        case use(Int)
        /// Open a connection (counted as opening), and go out on it; report with
        /// ``opened(_:small:)`` or ``openFailed(_:)``.
        case open
        /// Wait, and ask again when the schedule changes.
        case wait
        /// Take the connection opened ahead (``openAhead()``) when it is open, or its failure to
        /// open: counted as in flight there once ``aheadOpened(_:)`` reports it.
        case adoptAhead
    }

    /// The connection opened ahead of any request, while it opens.
    enum Ahead: Equatable {
        /// No request has come for it yet: it will be idle when open.
        case unclaimed
        /// A request adopted it, small or not.
        case adopted(small: Bool)
    }

    struct Connection: Equatable {
        /// Requests sent and not yet answered.
        var inFlight: Int
        /// A large or unknown answer is among them.
        var large: Bool
    }

    let connectionsPerHost: Int
    /// Requests in flight on one connection, at most; 1 once the server has shown it closes
    /// each connection after one answer.
    private(set) var depth: Int
    private(set) var connections: [Int: Connection] = [:]
    private(set) var opening = 0
    /// Connections that closed while they opened (a server that hangs up at once): retired
    /// before they were opened, and not to be counted or lent when they are.
    private(set) var retiredWhileOpening: Set<Int> = []
    /// Large requests told to wait, and not yet asking again.
    private(set) var largeWaiting = 0
    /// The connection opening ahead of any request, if one is.
    private(set) var ahead: Ahead?

    init(connectionsPerHost: Int, depth: Int) {
        self.connectionsPerHost = max(1, connectionsPerHost)
        self.depth = max(1, depth)
    }

    /// Where a request goes; `askingAgain` when it was told to wait before.
    mutating func assign(small: Bool, askingAgain: Bool) -> Decision {
        if askingAgain, !small { largeWaiting -= 1 }
        let decision = decide(small: small)
        if decision == .wait, !small { largeWaiting += 1 }
        return decision
    }

    private mutating func decide(small: Bool) -> Decision {
        if small, largeWaiting > 0 { return .wait }
        if let idle = connections.first(where: { $0.value.inFlight == 0 })?.key {
            connections[idle] = Connection(inFlight: 1, large: !small)
            return .use(idle)
        }
        if ahead == .unclaimed {
            ahead = .adopted(small: small)
            return .adoptAhead
        }
        if connections.count + opening < connectionsPerHost {
            opening += 1
            return .open
        }
        guard small else { return .wait }
        let depth = depth
        let open = connections.lazy.filter { !$0.value.large && $0.value.inFlight < depth }
        guard let leastBusy = open.min(by: { $0.value.inFlight < $1.value.inFlight })?.key else { return .wait }
        connections[leastBusy]!.inFlight += 1
        return .use(leastBusy)
    }

    /// The connection a ``Decision/open`` asked for is open as `id`, its request in flight.
    /// Returns `false` when it closed meanwhile (``retired(_:afterOneAnswer:)`` came first): it
    /// takes no more requests, and the one it was opened for fails as sent on a closed connection.
    @discardableResult
    mutating func opened(_ id: Int, small: Bool) -> Bool {
        opening -= 1
        if retiredWhileOpening.remove(id) != nil { return false }
        connections[id] = Connection(inFlight: 1, large: !small)
        return true
    }

    /// The connection a ``Decision/open`` asked for, `id`, could not be opened.
    mutating func openFailed(_ id: Int) {
        opening -= 1
        retiredWhileOpening.remove(id)
    }

    /// Whether to open a connection ahead of any request: only to an origin with none, open or
    /// opening. Report it with ``aheadOpened(_:)`` or ``aheadFailed(_:)``.
    mutating func openAhead() -> Bool {
        guard connections.isEmpty, opening == 0, ahead == nil else { return false }
        opening += 1
        ahead = .unclaimed
        return true
    }

    /// The connection opened ahead is open as `id`: idle, or in flight for the request that
    /// adopted it. `false`, as ``opened(_:small:)``, when it closed meanwhile.
    @discardableResult
    mutating func aheadOpened(_ id: Int) -> Bool {
        let adopter = ahead
        ahead = nil
        guard case .adopted(let small) = adopter else {
            opening -= 1
            if retiredWhileOpening.remove(id) != nil { return false }
            connections[id] = Connection(inFlight: 0, large: false)
            return true
        }
        return opened(id, small: small)
    }

    /// The connection opened ahead, `id`, could not be opened; a request that adopted it fails
    /// as if it had opened it.
    mutating func aheadFailed(_ id: Int) {
        ahead = nil
        openFailed(id)
    }

    /// A response on connection `id` ended. Answers whom to wake: every waiter while a large
    /// request waits (it may take only an idle connection), else one.
    mutating func answered(_ id: Int) -> Wake {
        guard var connection = connections[id] else { return .none }
        connection.inFlight -= 1
        if connection.inFlight == 0 { connection.large = false }
        connections[id] = connection
        return largeWaiting > 0 ? .all : .one
    }

    /// Connection `id` takes no more requests. `afterOneAnswer`: the server said so with its
    /// first answer (an HTTP/1.0 server, `python3 -m http.server`): requests sent behind it would
    /// only be sent again, so nothing more is sent ahead on this origin.
    mutating func retired(_ id: Int, afterOneAnswer: Bool = false) {
        // Its channel may close before its opener reports it open: the event loop and the
        // opener's task race.
        if connections.removeValue(forKey: id) == nil, opening > 0 { retiredWhileOpening.insert(id) }
        if afterOneAnswer { depth = 1 }
    }

    /// Whom a change wakes.
    enum Wake: Equatable {
        case none, one, all
    }
}
