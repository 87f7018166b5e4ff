import Foundation
import PulseArchive

/// Months of a smart ring's life, generated deterministically from a seed: overnight heart
/// rate, HRV, SpO2 and temperature; nights with sleep stages; daily activity and hourly
/// buckets; runs with GPS; coach conversations; a profile with a learned resting-HR baseline.
///
/// A slow "recovery" random walk drives the nights, so readiness computed from the data spans
/// good and bad mornings rather than sitting at one value.
public struct SyntheticRing {
    public let options: DemoOptions
    private var random: SeededGenerator
    private let calendar: Calendar
    private let deviceId: String
    private let attachmentName: String
    private var attachmentReferenced = false
    private let minute: Int64 = 60_000
    private let hour: Int64 = 3_600_000

    public init(options: DemoOptions) {
        self.options = options
        self.random = SeededGenerator(seed: options.seed)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = options.timeZone
        self.calendar = calendar
        self.deviceId = random.uuid()
        self.attachmentName = random.uuid() + ".jpg"
    }

    var firstMidnight: Int64 { midnight(daysBeforeEnd: options.days - 1) }
    var lastMidnight: Int64 { midnight(daysBeforeEnd: 0) }

    /// Every instant the demo writes lies in here: rows start at most two hours before the
    /// first midnight (the device and profile), documents a day before it, and the last day's
    /// rows end before its next evening. `demo` refuses options whose span leaves
    /// `ArchiveDate.representable`, so a demo store can always be exported.
    public var span: ClosedRange<Int64> {
        (firstMidnight - 86_400_000)...(lastMidnight + 2 * 86_400_000)
    }

    /// Local midnight of the day `offset` days before the end day, in milliseconds.
    private func midnight(daysBeforeEnd offset: Int) -> Int64 {
        let end = calendar.date(from: options.endDay)!
        let day = calendar.date(byAdding: .day, value: -offset, to: calendar.startOfDay(for: end))!
        return Int64((day.timeIntervalSince1970 * 1000).rounded())
    }

    private func row(_ table: ArchiveTable, _ values: KeyValuePairs<String, FieldValue>) -> ArchiveRow {
        var row = ArchiveRow(table: table)
        for (name, value) in values {
            guard let index = table.fieldIndex(name) else { preconditionFailure("\(table.key) has no field \(name)") }
            row[index] = value
        }
        return row
    }

    public mutating func generate(into sink: inout some DemoSink) throws {
        var recovery = 0.0
        var restingHeartRates: [(Int64, Double)] = []
        var battery = 90
        var conversationId: String?
        let firstMidnight = midnight(daysBeforeEnd: options.days - 1)

        for offset in stride(from: options.days - 1, through: 0, by: -1) {
            let day = midnight(daysBeforeEnd: offset)
            let dayIndex = options.days - 1 - offset
            // Recovery drifts, with an occasional hard day or bad night.
            recovery = max(-1, min(1, recovery * 0.8 + random.normal(mean: 0.05, deviation: 0.3)))
            if random.chance(0.08) { recovery = -0.9 }

            let night = try emitNight(day: day, recovery: recovery, into: &sink, heartRates: &restingHeartRates)
            try emitDaytime(day: day, recovery: recovery, into: &sink, heartRates: &restingHeartRates)
            try emitActivity(day: day, into: &sink)
            if dayIndex % 3 == 1 { try emitRun(day: day, into: &sink) }
            try emitDeviceChatter(day: day, battery: &battery, into: &sink)
            if dayIndex % 7 == 0 { conversationId = try emitCoachConversation(day: day, into: &sink) }
            try emitNotification(day: day, conversationId: conversationId, into: &sink)
            try emitCycleDay(day: day, dayIndex: dayIndex, into: &sink)
            if options.includeStoredReadiness, night.minutes > 0, dayIndex >= 7 {
                try emitStoredReadiness(day: day, recovery: recovery, into: &sink)
            }
            restingHeartRates.removeAll { $0.0 < day - 29 * 86_400_000 }
        }
        try emitDeviceAndProfile(firstMidnight: firstMidnight, heartRates: restingHeartRates, into: &sink)
        try emitSettingsAndAttachments(into: &sink)
    }

    // MARK: - Nights

    private mutating func emitNight(day: Int64, recovery: Double, into sink: inout some DemoSink,
                                    heartRates: inout [(Int64, Double)]) throws -> (start: Int64, minutes: Int) {
        let start = day - 60 * minute - Int64(random.integer(0...55)) * minute
        var minutes = random.integer(400...500)
        if recovery < -0.6 { minutes -= random.integer(60...150) }
        let end = start + Int64(minutes) * minute
        let sessionId = random.uuid()
        try sink.add(row(.sleepSessions, [
            "id": .string(sessionId), "date": .date(day), "startAt": .date(start), "endAt": .date(end),
            "totalMinutes": .int(Int64(minutes)), "syncedAt": .date(end + 20 * minute),
            "createdAt": .date(end + 20 * minute), "updatedAt": .date(end + 20 * minute),
        ]), to: .sleepSessions)

        // Stage blocks: cycles of light, deep, light, REM, with short awakenings.
        var cursor = 0
        let cycle: [(String, ClosedRange<Int>)] = [("light", 20...40), ("deep", 15...35), ("light", 15...30), ("rem", 10...30), ("awake", 2...8)]
        var step = 0
        while cursor < minutes {
            let (stage, range) = cycle[step % cycle.count]
            var length = random.integer(range)
            if stage == "deep" && recovery < -0.5 { length /= 2 }
            length = min(length, minutes - cursor)
            try sink.add(row(.sleepStageBlocks, [
                "id": .string(random.uuid()), "sessionId": .string(sessionId),
                "startAt": .date(start + Int64(cursor) * minute), "startMinute": .int(Int64(cursor)),
                "durationMinutes": .int(Int64(length)), "stageRaw": .string(stage),
            ]), to: .sleepStageBlocks)
            cursor += length
            step += 1
        }

        // Overnight signals: lower HR and higher HRV on well-recovered nights.
        let resting = 53 - 4 * recovery
        var t = start
        while t <= end {
            let hr = (resting + random.normal(mean: 3, deviation: 2.5)).rounded()
            heartRates.append((t, hr))
            try measurement("hr", hr, "bpm", at: t, into: &sink)
            if (t - start) % (30 * minute) == 0 {
                try measurement("hrv", (58 * (1 + 0.28 * recovery) + random.normal(mean: 0, deviation: 5)).rounded(), "ms", at: t, into: &sink)
                let fever = recovery < -0.8 ? 0.7 : 0
                try measurement("temp", ((36.1 + fever + random.normal(mean: 0, deviation: 0.08)) * 100).rounded() / 100, "°C", at: t, into: &sink)
            }
            if (t - start) % hour == 0 {
                try measurement("spo2", Double(random.integer(94...99)), "%", at: t, into: &sink)
            }
            t += 10 * minute
        }
        return (start, minutes)
    }

    private mutating func measurement(_ kind: String, _ value: Double, _ unit: String, at time: Int64,
                                      source: String = "ring", session: String? = nil, into sink: inout some DemoSink) throws {
        try sink.add(row(.measurements, [
            "id": .string(random.uuid()), "kindRaw": .string(kind), "value": .double(value), "unit": .string(unit),
            "timestamp": .date(time), "sourceRaw": .string(source), "confidenceRaw": .string("known"),
            "activitySessionId": session.map { .string($0) } ?? .null, "createdAt": .date(time + 90_000),
        ]), to: .measurements)
    }

    // MARK: - Days

    private mutating func emitDaytime(day: Int64, recovery: Double, into sink: inout some DemoSink,
                                      heartRates: inout [(Int64, Double)]) throws {
        var t = day + 8 * hour
        while t < day + 22 * hour {
            let hr = (72 - 3 * recovery + random.normal(mean: 0, deviation: 8)).rounded()
            heartRates.append((t, hr))
            try measurement("hr", hr, "bpm", at: t, into: &sink)
            if random.chance(0.15) {
                try measurement("stress", Double(random.integer(15...70)), "", at: t, into: &sink)
            }
            t += 30 * minute
        }
    }

    private mutating func emitActivity(day: Int64, into sink: inout some DemoSink) throws {
        var totalSteps = 0
        for h in 7...21 {
            let steps = random.integer(0...(h == 12 || h == 18 ? 2_500 : 900))
            totalSteps += steps
            let start = day + Int64(h) * hour
            try sink.add(row(.activityBucketSamples, [
                "startEpoch": .int(start / 1000), "date": .date(day), "timestamp": .date(start),
                "steps": .int(Int64(steps)), "distanceMeters": .double((Double(steps) * 0.74).rounded()),
                "source": .string("ring_history"), "updatedAt": .date(start + hour),
            ]), to: .activityBucketSamples)
        }
        try sink.add(row(.activityDailies, [
            "id": .string(random.uuid()), "date": .date(day), "steps": .int(Int64(totalSteps)),
            "calories": .double((Double(totalSteps) * 0.045 * 10).rounded() / 10),
            "distanceMeters": .double((Double(totalSteps) * 0.74).rounded()),
            "activeMinutes": .int(Int64(random.integer(15...75))), "source": .string("ring"),
            "syncedAt": .date(day + 22 * hour), "createdAt": .date(day + 7 * hour), "updatedAt": .date(day + 22 * hour),
        ]), to: .activityDailies)
    }

    private mutating func emitRun(day: Int64, into sink: inout some DemoSink) throws {
        let sessionId = random.uuid()
        let start = day + 18 * hour + Int64(random.integer(0...40)) * minute
        let pauseSeconds = random.chance(0.5) ? Double(random.integer(30...240)) : 0
        let length = Int64(random.integer(25...55)) * minute
        let end = start + length + Int64(pauseSeconds * 1000)
        var latitude = 52.5200 + random.uniform(-0.01...0.01)
        var longitude = 13.4050 + random.uniform(-0.01...0.01)
        var points = 0, rejected = 0
        var t = start
        while t <= end {
            let accepted = !random.chance(0.03)
            if accepted { points += 1 } else { rejected += 1 }
            latitude += random.uniform(-0.00004...0.00008)
            longitude += random.uniform(-0.00004...0.00008)
            try sink.add(row(.activityGpsPoints, [
                "id": .string(random.uuid()), "sessionId": .string(sessionId),
                "latitude": .double((latitude * 1e6).rounded() / 1e6), "longitude": .double((longitude * 1e6).rounded() / 1e6),
                "altitude": .double((34 + random.uniform(-2...2)) * 10 / 10), "horizontalAccuracy": .double(Double(random.integer(3...12))),
                "speed": .double((random.uniform(2.4...3.6) * 100).rounded() / 100), "course": .double(Double(random.integer(0...359))),
                "timestamp": .date(t), "accepted": .bool(accepted),
                "rejectionReason": accepted ? .null : .string("poor_accuracy"),
            ]), to: .activityGpsPoints)
            t += 15_000
        }
        var heartRates: [Double] = []
        t = start
        var polls = 0
        while t <= end {
            let hr = Double(random.integer(132...172))
            heartRates.append(hr)
            let measurementId = random.uuid()
            try sink.add(row(.activitySamples, [
                "id": .string(random.uuid()), "sessionId": .string(sessionId), "measurementId": .string(measurementId),
                "kind": .string("hr"), "value": .double(hr), "unit": .string("bpm"), "timestamp": .date(t),
                "source": .string("ring"), "confidenceRaw": .string("known"),
            ]), to: .activitySamples)
            if (t - start) % (5 * minute) == 0 {
                polls += 1
                try sink.add(row(.activitySensorPollEvents, [
                    "id": .string(random.uuid()), "sessionId": .string(sessionId), "timestamp": .date(t),
                    "kind": .string("hr"), "status": .string("success"), "value": .double(hr),
                ]), to: .activitySensorPollEvents)
            }
            t += minute
        }
        let events: [(String, Int64, FieldValue)] = [
            ("started", start, .null), ("gps_started", start + 1_000, .null),
            ("finished", end, .string(#"{"reason":"user"}"#)),
        ]
        for (kind, time, payload) in events {
            try sink.add(row(.activityEvents, [
                "id": .string(random.uuid()), "sessionId": .string(sessionId), "kind": .string(kind),
                "timestamp": .date(time), "payloadJSON": payload,
            ]), to: .activityEvents)
        }
        let average = heartRates.reduce(0, +) / Double(heartRates.count)
        try sink.add(row(.activitySessions, [
            "id": .string(sessionId), "type": .string("run"), "statusRaw": .string("finished"),
            "startedAt": .date(start), "endedAt": .date(end), "totalPauseSeconds": .double(pauseSeconds),
            "calories": .double(Double(length / minute) * 11), "distanceMeters": .double(Double(points) * 42),
            "avgHeartRate": .double((average * 10).rounded() / 10), "minHeartRate": .double(heartRates.min()!),
            "maxHeartRate": .double(heartRates.max()!), "avgSpO2": .double(97), "latestSpO2": .double(96),
            "notes": random.chance(0.3) ? .string("Easy run by the river — felt good / legs fresh") : .null,
            "useGps": .bool(true), "perceivedEffort": .string(["easy", "moderate", "hard"][random.integer(0...2)]),
            "gpsPointCount": .int(Int64(points)), "rejectedGpsPointCount": .int(Int64(rejected)),
            "hrPollCount": .int(Int64(polls)), "hrPollFailureCount": .int(0), "spo2PollCount": .int(2),
            "spo2PollFailureCount": .int(0), "lastSensorPollAt": .date(end), "lastGpsPointAt": .date(end),
            "vitalsModeRaw": .string("stream"), "createdAt": .date(start), "updatedAt": .date(end + minute),
        ]), to: .activitySessions)
    }

    // MARK: - Device chatter

    private mutating func emitDeviceChatter(day: Int64, battery: inout Int, into sink: inout some DemoSink) throws {
        for h in stride(from: 2, to: 24, by: 6) {
            let t = day + Int64(h) * hour
            battery -= random.integer(3...7)
            if battery < 20 { battery = 100 }
            try sink.add(row(.batterySamples, [
                "id": .string(random.uuid()), "percent": .int(Int64(battery)), "timestamp": .date(t), "createdAt": .date(t),
            ]), to: .batterySamples)
        }
        for i in 0..<options.rawPacketsPerDay {
            let t = day + 8 * hour + Int64(i) * (14 * hour / Int64(max(1, options.rawPacketsPerDay)))
            let command = [21, 22, 55, 105][i % 4]
            let payload = (0..<16).map { _ in String(format: "%02X", random.integer(0...255)) }.joined()
            try sink.add(row(.rawPackets, [
                "id": .string(random.uuid()), "timestamp": .date(t), "directionRaw": .string(i % 2 == 0 ? "outgoing" : "incoming"),
                "commandId": .int(Int64(command)), "hexPayload": .string(payload),
                "decodedKind": i % 2 == 0 ? .null : .string("heartRateHistory"),
                "decodedJSON": i % 2 == 0 ? .null : .string(#"{"samples":12}"#),
                "confidenceRaw": .string("known"), "createdAt": .date(t),
            ]), to: .rawPackets)
        }
        try sink.add(row(.derivedUpdates, [
            "id": .string(random.uuid()), "timestamp": .date(day + 9 * hour), "kind": .string("daily_rollup"),
            "entityType": .string("ActivityDaily"), "entityId": .string("day-\(day / 1000)"),
            "payloadJSON": .string(#"{"source":"ring_history"}"#),
        ]), to: .derivedUpdates)
        let logs: [(String, String, String, Int64)] = [
            ("connection", "info", "Connected to R02_4F1A", 7 * hour + 2 * minute),
            ("sync", "info", "Synced 3/4 history pages (312 records)", 7 * hour + 3 * minute),
            ("battery", battery < 30 ? "warn" : "info", "Battery at \(battery)%", 12 * hour),
        ]
        var allLogs = logs
        if (day / 86_400_000) % 9 == 4 {
            // A raw value from a newer app: carried verbatim, never mapped to a default.
            allLogs.append(("firmware", "debug", "OTA check: RY02_3.00.17 is current", 7 * hour + 4 * minute))
        }
        for (category, level, message, time) in allLogs {
            try sink.add(row(.wearableLogs, [
                "id": .string(random.uuid()), "timestamp": .date(day + time), "deviceTypeRaw": .string("colmiR02"),
                "categoryRaw": .string(category), "levelRaw": .string(level), "message": .string(message),
                "metadataJSON": category == "sync" ? .string(#"{"pages":4}"#) : .null,
            ]), to: .wearableLogs)
        }
    }

    // MARK: - Coach

    private mutating func emitCoachConversation(day: Int64, into sink: inout some DemoSink) throws -> String {
        let conversationId = random.uuid()
        let start = day + 8 * hour + 15 * minute
        let turns: [(String, String)] = [
            ("user", "How did I sleep this week?"),
            ("assistant", "Your nights averaged 7 h 24 m with steady deep sleep. Très bien — keep the 23:00 bedtime. 😴"),
            ("user", "Should I run today?"),
            ("assistant", "Yes: HRV is at your baseline and resting HR is normal. An easy 30-minute run fits."),
        ]
        defer { attachmentReferenced = true }
        var inputTokens = 0, outputTokens = 0
        var lastAssistant: String?
        for (i, (role, body)) in turns.enumerated() {
            let messageId = random.uuid()
            let at = start + Int64(i) * minute
            let isAssistant = role == "assistant"
            if isAssistant { inputTokens += 850; outputTokens += 120; lastAssistant = messageId }
            try sink.add(row(.coachMessages, [
                "id": .string(messageId), "conversationId": .string(conversationId), "role": .string(role), "body": .string(body),
                "inputTokens": isAssistant ? .int(850) : .null, "outputTokens": isAssistant ? .int(120) : .null,
                "costUSD": isAssistant ? .double(0.00213) : .null,
                "modelUsed": isAssistant ? .string("coach-large-2") : .null, "providerUsed": isAssistant ? .string("cloud") : .null,
                "cardsJSON": i == 3 ? .string(#"[{"type":"readiness","score":82}]"#) : .null,
                "attachmentsJSON": i == 0 && !attachmentReferenced ? .string("[\"\(attachmentName)\"]") : .null,
                "createdAt": .date(at),
            ]), to: .coachMessages)
        }
        if let lastAssistant {
            try sink.add(row(.coachToolCalls, [
                "id": .string(random.uuid()), "conversationId": .string(conversationId), "messageId": .string(lastAssistant),
                "toolName": .string("get_sleep_summary"), "inputJSON": .string(#"{"days":7}"#),
                "outputJSON": .string(#"{"avgMinutes":444}"#), "label": .string("Looked at your sleep"),
                "statusRaw": .string("success"), "sequence": .int(0), "createdAt": .date(start + 2 * minute),
            ]), to: .coachToolCalls)
        }
        try sink.add(row(.coachConversations, [
            "id": .string(conversationId), "title": .string("Today check-in"), "totalInputTokens": .int(Int64(inputTokens)),
            "totalOutputTokens": .int(Int64(outputTokens)), "totalCostUSD": .double(0.00426),
            "createdAt": .date(start), "updatedAt": .date(start + 3 * minute),
        ]), to: .coachConversations)
        try sink.add(row(.coachMemories, [
            "id": .string(random.uuid()), "key": .string("preferred_run_time"), "value": .string("evenings after 18:00"),
            "memoryType": .string("preference"), "importance": .int(3), "isUserEditable": .bool(true),
            "createdAt": .date(start + minute), "updatedAt": .date(start + minute),
        ]), to: .coachMemories)
        try sink.add(row(.coachSummaries, [
            "id": .string(random.uuid()), "kind": .string("sleep_range_7d"), "scopeKey": .string("week-\(day / 1000)"),
            "title": .string("Your week of sleep"), "body": .string("Consistent bedtimes, good deep sleep."),
            "chipsJSON": .string(#"["7h 24m","Deep 18%"]"#), "conversationId": .string(conversationId),
            "dataSignature": .string("sig-\(day / 1000)"), "createdAt": .date(start), "updatedAt": .date(start),
        ]), to: .coachSummaries)
        return conversationId
    }

    private mutating func emitNotification(day: Int64, conversationId: String?, into sink: inout some DemoSink) throws {
        let components = calendar.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: Double(day) / 1000))
        let key = String(format: "%04d-%02d-%02d", components.year!, components.month!, components.day!)
        try sink.add(row(.coachNotificationRecords, [
            "id": .string(random.uuid()), "slotRaw": .string("morning"), "dateKey": .string(key),
            "title": .string("Good morning"), "body": .string("Your readiness is in. Tap to see what shaped it."),
            "createdAt": .date(day + 7 * hour + 30 * minute),
        ]), to: .coachNotificationRecords)
    }

    private mutating func emitCycleDay(day: Int64, dayIndex: Int, into sink: inout some DemoSink) throws {
        let cycleDay = dayIndex % 28
        guard cycleDay < 5 || cycleDay == 14 else { return }
        let components = calendar.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: Double(day) / 1000))
        try sink.add(row(.cycleDays, [
            "dateString": .string(String(format: "%04d-%02d-%02d", components.year!, components.month!, components.day!)),
            "date": .date(day), "isPeriod": .bool(cycleDay < 5), "isDisturbed": .bool(cycleDay == 14),
            "disturbedAutoDetected": .bool(cycleDay == 14), "notes": cycleDay == 0 ? .string("Cramps, took it easy") : .null,
            "updatedAt": .date(day + 21 * hour),
        ]), to: .cycleDays)
    }

    private mutating func emitStoredReadiness(day: Int64, recovery: Double, into sink: inout some DemoSink) throws {
        let score = Int64(max(30, min(98, (76 + 20 * recovery).rounded())))
        let band = score >= 85 ? "Primed" : score >= 70 ? "Ready" : score >= 55 ? "Moderate" : "Rest needed"
        let contributors = #"[{"kindRaw":"sleep","earned":24,"maxPoints":30,"value":81,"detail":"Sleep score 81"},{"kindRaw":"restingHeartRate","earned":25,"maxPoints":25,"value":52,"baseline":53,"deviation":-1,"detail":"Resting HR 1 bpm below your baseline"}]"#
        let computed = day + 7 * hour + 5 * minute
        try sink.add(row(.readinessDailies, [
            "id": .string(random.uuid()), "date": .date(day), "score": .int(score), "bandRaw": .string(band),
            "availablePoints": .double(55), "contributorsJSON": .string(contributors), "algorithmVersion": .int(2),
            "computedAt": .date(computed), "createdAt": .date(computed), "updatedAt": .date(computed),
        ]), to: .readinessDailies)
    }

    // MARK: - Device, profile, settings

    private mutating func emitDeviceAndProfile(firstMidnight: Int64, heartRates: [(Int64, Double)], into sink: inout some DemoSink) throws {
        let lastTime = heartRates.map(\.0).max() ?? firstMidnight
        try sink.add(row(.devices, [
            "id": .string(deviceId), "name": .string("SMART_RING"), "advertisedName": .string("R02_4F1A"),
            "peripheralIdentifier": .string(random.uuid()), "batteryPercent": .int(78), "stateRaw": .string("disconnected"),
            "lastConnectedAt": .date(lastTime), "lastDisconnectedAt": .date(lastTime + hour), "lastSyncAt": .date(lastTime),
            "lastFullSyncAt": .date(lastTime), "firmwareVersion": .string("RY02_3.00.17_240328"),
            "wearableModelID": .string("colmi-r02"), "deviceTypeRaw": .string("colmiR02"),
            "capabilitiesRaw": .string("heartRate,spo2,steps,sleep,battery,hrv,temperature,stress"),
            "createdAt": .date(firstMidnight - 2 * hour), "updatedAt": .date(lastTime + hour),
        ]), to: .devices)
        try sink.add(row(.deviceMeasurementConfigs, [
            "deviceId": .string(deviceId), "hrIntervalMinutes": .int(10), "hrEnabled": .bool(true), "spo2Enabled": .bool(true),
            "stressEnabled": .bool(true), "hrvEnabled": .bool(true), "temperatureEnabled": .bool(true),
            "updatedAt": .date(firstMidnight - hour),
        ]), to: .deviceMeasurementConfigs)
        // The resting-HR baseline the app learns: the all-day p10 of the last 30 days.
        let values = heartRates.map(\.1).filter { $0 > 0 }.sorted()
        var baseline: FieldValue = .null
        if values.count >= 20 {
            let rank = 0.10 * Double(values.count - 1)
            let low = Int(rank.rounded(.down)), high = Int(rank.rounded(.up))
            baseline = .double(values[low] + (rank - Double(low)) * (values[high] - values[low]))
        }
        try sink.add(row(.userProfiles, [
            "id": .string(random.uuid()), "name": .string("Zoë"), "age": .int(34), "sex": .string("female"),
            "heightCm": .double(168), "weightKg": .double(61.5), "unitsRaw": .string("metric"),
            "onboardingCompleted": .bool(true), "baselineCompleted": .bool(true), "athleteMode": .bool(false),
            "preferredGlucoseUnitRaw": .string("mgdl"), "hrZoneModeRaw": .string("auto"),
            "hrRestingBaseline": baseline, "hrRestingBaselineUpdatedAt": .date(lastTime),
            "createdAt": .date(firstMidnight - 2 * hour), "updatedAt": .date(lastTime),
        ]), to: .userProfiles)
        try sink.add(row(.userGoals, [
            "id": .string(random.uuid()), "steps": .int(10_000), "sleepMinutes": .int(480), "activeMinutes": .int(45),
            "workoutsPerWeek": .int(4), "distanceMeters": .double(8_000), "calories": .int(500),
            "updatedAt": .date(firstMidnight - hour),
        ]), to: .userGoals)
    }

    private mutating func emitSettingsAndAttachments(into sink: inout some DemoSink) throws {
        try sink.setSetting("pulseloop.metricprefs.v1", #"{"distanceUnit":"km","showSpO2":true}"#)
        try sink.setSetting("pulseloop.workoutprefs.v1", #"{"autoPause":true,"defaultType":"run"}"#)
        try sink.setSetting("pulseloop.coach.settings.v1", #"{"enabled":true,"tone":"friendly"}"#)
        try sink.setSetting(ArchiveFormat.readinessPrefsKey,
                            #"{"includeInNotifications":true,"masterEnabled":true,"shareWithCoach":true,"showOnToday":true}"#)
        // A tiny JPEG-like attachment a coach message could reference.
        var bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 0x4A, 0x46, 0x49, 0x46, 0x00]
        for _ in 0..<117 { bytes.append(UInt8(truncatingIfNeeded: random.next())) }
        bytes += [0xFF, 0xD9]
        try sink.addAttachment(attachmentName, bytes)
    }
}
